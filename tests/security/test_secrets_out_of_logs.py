"""Attack: read a run's secrets (its ingest token, its vLLM key, its orders' secret) from a log:
the worker's, or the run's own, which the trainer's output reaches. A spec refused as invalid
is told field by field without the values given (pydantic's message quoted the whole spec)."""
import json
import logging
import subprocess
import sys

from worker import tasks
from worker.trainer.config import TrainingConfig
from worker.trainer_process import PROJECT_ROOT

TOKEN, KEY, SECRET = "tok-" + "1" * 40, "key-" + "2" * 40, "3" * 64


def invalid_spec(tmp_path) -> dict:
    """Valid but for its rewards (none), an error about the whole spec, whose input is all of it."""
    return {"run_id": 7, "model": "m", "output_dir": str(tmp_path / "out"),
            "dataset": {"kind": "generator", "generator": "arithmetic"}, "rewards": [],
            "config": TrainingConfig().model_dump(), "inference_url": "http://127.0.0.1:9",
            "inference_api_key": KEY, "orders_secret": SECRET,
            "ingest": {"url": "http://cp/api/runs/7/events/", "token": TOKEN}}


def test_the_worker_refuses_an_invalid_spec_without_logging_its_secrets(tmp_path, caplog):
    with caplog.at_level(logging.ERROR, logger="worker.tasks"):
        assert tasks.execute_run.run(7, invalid_spec(tmp_path)) == "invalid-spec"
    assert "refusing an invalid launch spec" in caplog.text and "at least one reward function" in caplog.text
    assert not any(secret in caplog.text for secret in (TOKEN, KEY, SECRET))


def test_the_trainer_refuses_an_invalid_spec_without_printing_its_secrets(tmp_path):
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(invalid_spec(tmp_path)))
    result = subprocess.run([sys.executable, "-m", "worker.trainer", "--spec", str(path)], cwd=PROJECT_ROOT,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert "invalid spec" in result.stderr and "at least one reward function" in result.stderr
    assert not any(secret in result.stdout + result.stderr for secret in (TOKEN, KEY, SECRET))
