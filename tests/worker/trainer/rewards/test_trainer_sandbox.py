"""The trainer starts a reward sandbox only for code rewards, says so in its log, and closes it when it stops."""
import json

import pytest

pytest.importorskip("torch")

from worker.trainer.app import Trainer  # noqa: E402
from worker.trainer.config import TrainingConfig  # noqa: E402
from worker.trainer.spec import LaunchSpec  # noqa: E402

CODE = "def reward(prompts, completions, **columns):\n    return [1.0] * len(completions)\n"


def trainer(tmp_path, rewards) -> Trainer:
    return Trainer(LaunchSpec.model_validate({
        "run_id": 1, "model": str(tmp_path / "no-such-model"), "output_dir": str(tmp_path / "out"),
        "dataset": {"kind": "generator", "generator": "arithmetic", "params": {"count": 8}},
        "rewards": rewards, "config": TrainingConfig(max_steps=1).model_dump(),
    }))


def logged(tmp_path) -> list[str]:
    lines = (tmp_path / "out" / "events" / "events-trainer-1.jsonl").read_text().splitlines()
    return [event["message"] for event in map(json.loads, lines) if event["type"] == "log"]


def test_a_run_with_code_rewards_starts_the_sandbox_and_closes_it_on_the_way_out(tmp_path):
    # The model is missing, so the run fails after the rewards are set up: the pool must not outlive it.
    run = trainer(tmp_path, [{"name": "mine", "kind": "code", "source": CODE}])
    assert run.run() == "failed"
    pool = run.reward_sandbox
    assert pool is not None and pool.closed and pool.processes_started == 2
    assert pool._idle.empty()
    assert any(message.startswith("reward sandbox ready: 2 processes") for message in logged(tmp_path))


def test_a_run_with_only_builtins_starts_no_sandbox(tmp_path):
    run = trainer(tmp_path, [{"name": "acc", "kind": "builtin", "builtin": "accuracy"}])
    assert run.run() == "failed"
    assert run.reward_sandbox is None
