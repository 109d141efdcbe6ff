"""The real default model end to end: SmolLM2-135M-Instruct on GSM8K questions, offline.

The trainer starts its own vLLM server here (no inference_url), trains two steps
and checkpoints; the events it would send stay in its local JSONL copy.
"""
import json
from pathlib import Path

import pytest

from worker.trainer.config import TrainingConfig

GSM8K = Path(__file__).resolve().parents[4] / "shared" / "datasets" / "gsm8k" / "test.jsonl"


@pytest.mark.slow
def test_smollm2_trains_on_gsm8k_and_checkpoints(smollm2_dir, tmp_path):
    if not GSM8K.exists():
        pytest.skip(f"GSM8K not found at {GSM8K}")
    from worker.trainer.app import run_trainer

    config = TrainingConfig(model=str(smollm2_dir), num_generations=4, per_device_train_batch_size=8, max_steps=2,
                            max_prompt_length=256, max_completion_length=64, save_steps=2, learning_rate=1e-5)
    spec = {
        "run_id": 1, "model": str(smollm2_dir), "output_dir": str(tmp_path / "out"), "config": config.model_dump(),
        "dataset": {"kind": "file", "path": str(GSM8K), "format": "jsonl", "prompt_column": "question"},
        "rewards": [{"name": "accuracy", "kind": "builtin", "builtin": "accuracy"},
                    {"name": "format", "kind": "builtin", "builtin": "format"}],
    }
    assert run_trainer(spec) == "succeeded"
    events = [json.loads(line) for line in (tmp_path / "out/events/events-trainer-1.jsonl").read_text().splitlines()]
    metrics = {e["step"]: e["values"] for e in events if e["type"] == "metrics"}
    samples = [s for e in events if e["type"] == "samples" for s in e["samples"]]
    assert sorted(metrics) == [0, 1, 2]  # step 0: the start-up timings, before any training
    assert {"setup/load_s", "setup/inference_wait_s"} <= set(metrics[0])
    assert metrics[2]["system/model_version"] == 2 and metrics[2]["train/grad_norm"] >= 0
    assert samples and set(samples[0]["rewards"]) == {"accuracy", "format"}
    assert (tmp_path / "out/checkpoints/step-0000002/model.safetensors").exists()
    assert [e["status"] for e in events if e["type"] == "status"] == ["starting", "running", "succeeded"]
