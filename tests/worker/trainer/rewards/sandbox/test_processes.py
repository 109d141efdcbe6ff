"""User code's processes stay bounded and end with the sandbox: a fork bomb meets the process
limit; a grandchild in a session of its own dies when its call times out or its process ends,
in a PID namespace (the kernel kills all with its init) and without one (the keeper, a child
subreaper, kills what is left)."""
import random

import pytest

from tests.support.sandbox import TEST_LIMITS, call, gone, leaves_a_sleeper, pids_running, reward_source, started
from worker.trainer.rewards.sandbox import SandboxError, SandboxLimits, SandboxPool
from worker.trainer.rewards.sandbox.isolation import Isolation

WORKS = reward_source("return [float(len(c)) for c in completions]")
FORK_BOMB = reward_source("while True:\n    os.fork()", imports="import os")


@pytest.fixture(params=["pid-namespace", "subreaper"])
def sandbox(request):
    isolation = Isolation() if request.param == "pid-namespace" else Isolation(namespaces=False)
    with SandboxPool(size=1, limits=TEST_LIMITS, isolation=isolation) as pool:
        if request.param == "pid-namespace" and "namespaces: network, pid" not in pool.confinement:
            pytest.skip(f"no PID namespace here ({pool.confinement})")
        yield pool


def sleeper_seconds() -> str:
    return f"{random.randint(100000, 999999)}.5"  # names this test's sleep among the machine's processes


def test_a_fork_bomb_meets_the_process_limit_and_the_next_call_works():
    limits = SandboxLimits(**{**TEST_LIMITS.as_dict(), "processes": 24})
    with SandboxPool(size=1, limits=limits) as pool:
        if "processes <= 24" not in pool.confinement:
            pytest.skip(f"no process limit here ({pool.confinement})")
        started = pool.processes_started
        with pytest.raises(SandboxError) as raised:
            call(pool, FORK_BOMB)
        assert raised.value.kind == "processes"
        assert "the sandbox allows 24 processes and threads at once" in raised.value.message
        assert call(pool, WORKS).values == [1.0, 2.0]
        assert pool.processes_started == started + 1  # the bomb's process was replaced, with its copies


def test_a_setsid_grandchild_dies_when_its_call_times_out(sandbox):
    seconds = sleeper_seconds()
    call(sandbox, leaves_a_sleeper(seconds))
    sleepers = started("sleep", seconds)
    assert len(sleepers) == 1  # it outlived the call, in a session of its own
    with pytest.raises(SandboxError) as raised:
        call(sandbox, leaves_a_sleeper(seconds + "1", then="while True: pass"))
    assert raised.value.kind == "timeout"
    assert gone(sleepers) and pids_running("sleep", seconds + "1") == []


def test_a_setsid_grandchild_dies_when_the_sandbox_closes(sandbox):
    seconds = sleeper_seconds()
    call(sandbox, leaves_a_sleeper(seconds))
    sleepers = started("sleep", seconds)
    assert len(sleepers) == 1
    sandbox.close()
    assert gone(sleepers)
