"""Attack: a run whose `model` is `--help`, `--config=<file>` or another of vLLM's options, so
that `vllm serve` reads it as one. The config schema and the worker's path check refuse such a
name first (worker/trainer/config/, models/paths.py); whatever reaches the server's start
anyway is refused there, before any process starts, with the reason."""
import pytest

from tests.support.processes import processes_mentioning
from worker.trainer.config import TrainingConfig
from worker.trainer.inference.server import VLLMServer


@pytest.mark.parametrize("model", ["--help", "--config=/etc/passwd", "-h", "--api-key=known"])
def test_a_model_that_reads_as_an_option_never_reaches_vllm(model):
    with pytest.raises(ValueError, match=r"cannot begin with '-' \(vLLM would read it as one of its options\)"):
        VLLMServer.for_config(model, TrainingConfig(), device="cpu", port=8999)
    assert processes_mentioning(f"serve {model}") == []
