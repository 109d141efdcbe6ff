"""Built-ins of dry runs in processes that a time limit stops (runs/dry_runs/builtin_process.py): values come
back checked, a call past DRY_RUN_TIMEOUT_S is killed with an error naming the setting, and the
next call gets a fresh process."""
import pytest

from runs.dry_runs.builtin_process import BuiltinPool
from worker.trainer.rewards.sandbox import SandboxError


@pytest.fixture
def pool():
    running = BuiltinPool(size=1)
    yield running
    running.close()


def test_a_built_in_reward_is_scored_in_the_process(pool):
    assert pool.reward("exact_match", {}, ["p"], ["4"], {"answer": ["4"]}) == [1.0]


def test_a_call_past_the_limit_is_killed_and_the_next_call_gets_a_fresh_process(pool, settings):
    settings.DRY_RUN_TIMEOUT_S = 0.2  # the regex's own timeout (1 s) comes later
    with pytest.raises(SandboxError) as stopped:
        pool.reward("format", {"regex": "(a|aa)+$"}, ["p"], ["a" * 5000 + "!"], {})
    assert stopped.value.kind == "timeout"
    assert stopped.value.message == ("took longer than 0.2 s (the dry-run limit, DRY_RUN_TIMEOUT_S); "
                                     "the call was stopped")
    settings.DRY_RUN_TIMEOUT_S = 30
    assert pool.reward("length", {"max_tokens": 2}, ["p"], ["two words"], {}) == [1.0]


def test_a_failing_built_in_is_an_error_and_the_next_call_is_answered(pool):
    with pytest.raises(SandboxError, match="no column 'answer'") as failed:
        pool.reward("accuracy", {}, ["p"], ["4"], {})
    assert failed.value.kind == "exception"
    assert pool.reward("exact_match", {}, ["p"], ["4"], {"answer": ["4"]}) == [1.0]
