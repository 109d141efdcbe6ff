"""The smoke mode every benchmark has (`--smoke`): its real code path at the smallest size.

A tiny random Llama (worker/trainer/models/tiny.py) instead of SmolLM2, one or two steps, one
repetition: seconds instead of minutes, so that `make test` notices a benchmark that no longer
runs (tests/bench/test_smoke.py). The figures it prints mean nothing.

A script that needs vLLM still uses a real server; `--server-url` hands it one already serving
the tiny model (started with `smoke_server_config()`), which is how the smoke test shares one
server between every script instead of paying vLLM's start (about a minute here) for each.
"""
import argparse
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

TINY_MODEL_NAME = "bench-tiny-llama"

# What a smoke run trains: 1 group of 2 completions a step, 16 tokens each, two steps; the
# evaluation (where a script turns it on) judges 4 rows.
SMOKE_SETTINGS = {
    "num_generations": 2, "per_device_train_batch_size": 2, "gradient_accumulation_steps": 1,
    "max_completion_length": 16, "max_prompt_length": 256, "max_steps": 2, "max_inflight_tasks": 2,
    "eval_examples": 4, "vllm_kv_cache_gib": 1, "vllm_request_timeout_s": 120.0, "save_steps": 1000,
}
# The shared server serves every script's prompts and completions (environments' episodes the longest).
SERVER_CONTEXT = 1024


def add_smoke_options(parser: argparse.ArgumentParser, serves: bool = False) -> None:
    """`--smoke`, and for a script that needs vLLM `--server-url`."""
    parser.add_argument("--smoke", action="store_true",
                        help="the tiniest run (a tiny random model, one or two steps): checks that the script "
                             "runs; its figures mean nothing")
    if serves:
        parser.add_argument("--server-url", help="with --smoke: a vLLM server already serving the tiny model "
                                                 "(bench.smoke.smoke_server_config) instead of starting one")


def refuse_server_url_without_smoke(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """A shared server serves the tiny model only: a full run given one would measure the wrong model."""
    if getattr(args, "server_url", None) and not args.smoke:
        parser.error("--server-url goes with --smoke (the shared server serves the tiny model)")


def tiny_model() -> str:
    """The tiny Llama, built once (about 6 s) under the data directory's models/, where runs may name it."""
    from worker.trainer.models.paths import models_dir
    from worker.trainer.models.tiny import build_tiny_model

    return str(build_tiny_model(models_dir() / TINY_MODEL_NAME))


def smoke_settings(settings: dict, **changes) -> dict:
    """A preset's settings (or any) made tiny: the tiny model and SMOKE_SETTINGS, then `changes`."""
    return {**settings, "model": tiny_model(), **SMOKE_SETTINGS, **changes}


def smoke_server_config():
    """The TrainingConfig of the one server the smoke test shares between scripts: LoRA enabled for
    bench.lora's adapter (full weights reload into it all the same)."""
    from worker.trainer.config import TrainingConfig

    return TrainingConfig(**smoke_settings({}, vllm_max_model_len=SERVER_CONTEXT, lora=True,
                                           lora_serving="adapter"))


@dataclass
class RunningServer:
    """A vLLM server someone else started and will stop: what the scripts read of a VLLMServer."""
    url: str
    served_model_name: str = "policy"  # worker/trainer/inference/launch.py: SERVED_MODEL_NAME
    api_key: str | None = None
    headers: dict = field(default_factory=dict)
    pid: int | None = None


@contextmanager
def vllm_server(model_dir: str, config, log_path: Path, server_url: str | None = None,
                **launch) -> Iterator:
    """The server at `server_url` when one is given, else a new one for `config`, stopped on leaving."""
    if server_url:
        yield RunningServer(server_url.rstrip("/"))
        return
    from worker.trainer.inference.server import VLLMServer

    with VLLMServer.for_config(model_dir, config, log_path=log_path, **launch) as server:
        yield server
