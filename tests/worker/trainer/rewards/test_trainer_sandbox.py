"""The trainer starts a reward sandbox only for code rewards, says so in its log, and closes it when it stops."""
import pytest

pytest.importorskip("torch")

from tests.support.trainers import logged_lines, trainer_for  # noqa: E402

CODE = "def reward(prompts, completions, **columns):\n    return [1.0] * len(completions)\n"


def test_a_run_with_code_rewards_starts_the_sandbox_and_closes_it_on_the_way_out(tmp_path):
    # The model is missing, so the run fails after the rewards are set up: the pool must not outlive it.
    run = trainer_for(tmp_path, rewards=[{"name": "mine", "kind": "code", "source": CODE}])
    assert run.run() == "failed"
    pool = run.reward_sandbox
    assert pool is not None and pool.closed and pool.processes_started == 2
    assert pool._idle.empty()
    assert any(message.startswith("reward sandbox ready: 2 processes") for message in logged_lines(tmp_path))


def test_a_run_with_only_builtins_starts_no_sandbox(tmp_path):
    run = trainer_for(tmp_path, rewards=[{"name": "acc", "kind": "builtin", "builtin": "accuracy"}])
    assert run.run() == "failed"
    assert run.reward_sandbox is None
