"""Bad input to the trainer ends the run with a clear reason, reported, never a silent hang."""
import json
import subprocess
import sys

import pytest

pytest.importorskip("torch")

from tests.support.asgi_server import ROOT  # noqa: E402
from worker.trainer.app import run_trainer  # noqa: E402
from worker.trainer.config import TrainingConfig  # noqa: E402


@pytest.fixture(autouse=True)
def models_allowed_in_tmp_path(tmp_path, monkeypatch):
    """The spec's model is a path the operator allows (MODEL_DIRS), with nothing there."""
    monkeypatch.setenv("MODEL_DIRS", str(tmp_path))


def spec(tmp_path, **overrides):
    base = {
        "run_id": 1, "model": str(tmp_path / "no-such-model"), "output_dir": str(tmp_path / "out"),
        "dataset": {"kind": "generator", "generator": "arithmetic", "params": {"count": 8}},
        "rewards": [{"name": "acc", "kind": "builtin", "builtin": "accuracy"}],
        "config": TrainingConfig(max_steps=1).model_dump(),
    }
    return {**base, **overrides}


def reported(tmp_path) -> list[dict]:
    lines = (tmp_path / "out" / "events" / "events-trainer-1.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def failure_reason(tmp_path) -> str:
    statuses = [e for e in reported(tmp_path) if e["type"] == "status"]
    assert statuses[-1]["status"] == "failed"
    assert any(e["type"] == "log" and e["level"] == "error" for e in reported(tmp_path))
    return statuses[-1]["message"]


def test_missing_model_directory_fails_with_its_path(tmp_path):
    assert run_trainer(spec(tmp_path)) == "failed"
    assert "no-such-model" in failure_reason(tmp_path) and "does not exist" in failure_reason(tmp_path)


def test_dataset_without_the_prompt_column_fails_naming_it(tmp_path):
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"question": "1+1?"}) + "\n")
    assert run_trainer(spec(tmp_path, dataset={"kind": "file", "path": str(data), "format": "jsonl"})) == "failed"
    assert "no prompt column 'prompt'" in failure_reason(tmp_path)


def test_unknown_builtin_reward_fails_naming_it(tmp_path):
    rewards = [{"name": "mine", "kind": "builtin", "builtin": "telepathy"}]
    assert run_trainer(spec(tmp_path, rewards=rewards)) == "failed"
    assert "reward 'mine'" in failure_reason(tmp_path)


def test_invalid_spec_is_refused_by_the_command_line(tmp_path):
    path = tmp_path / "spec.json"
    path.write_text(json.dumps({**spec(tmp_path), "config": {"num_generations": 3}}))
    result = subprocess.run([sys.executable, "-m", "worker.trainer", "--spec", str(path)], cwd=ROOT,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert "invalid spec" in result.stderr and "num_generations" in result.stderr


def test_unreadable_spec_file_is_refused(tmp_path):
    result = subprocess.run([sys.executable, "-m", "worker.trainer", "--spec", str(tmp_path / "missing.json")],
                            cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and "cannot read the spec" in result.stderr
