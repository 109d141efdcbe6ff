"""The pool keeps processes warm across calls and replaces the ones it had to give up."""
import threading

import pytest

from tests.support.sandbox import TEST_LIMITS, call, reward_source
from worker.trainer.rewards.sandbox import SandboxError, SandboxLimits, SandboxPool

# Its second value tells processes apart (pids do not: each sandbox has its own PID namespace).
COUNTER = reward_source("global calls\ncalls += 1\nreturn [float(calls), born]",
                        imports="import random\ncalls = 0\nborn = random.random()")


def test_calls_reuse_one_warm_process_and_its_loaded_code():
    with SandboxPool(size=1, limits=TEST_LIMITS) as pool:
        results = [call(pool, COUNTER).values for _ in range(20)]
    assert pool.processes_started == 1
    assert [r[0] for r in results] == [float(n) for n in range(1, 21)]  # loaded once, state kept
    assert len({r[1] for r in results}) == 1


def test_a_timed_out_process_is_replaced_and_the_next_call_works():
    with SandboxPool(size=1, limits=TEST_LIMITS) as pool:
        first_born = call(pool, COUNTER).values[1]
        with pytest.raises(SandboxError, match="longer than"):
            call(pool, reward_source("while True:\n    pass"))
        after = call(pool, COUNTER).values
    assert pool.processes_started == 2
    assert after[1] != first_born and after[0] == 1.0  # a fresh process loads the code again


def test_a_process_that_exits_is_replaced():
    with SandboxPool(size=1, limits=TEST_LIMITS) as pool:
        with pytest.raises(SandboxError) as raised:
            call(pool, reward_source("os._exit(7)", imports="import os"))
        assert raised.value.kind == "crashed" and "exited with code 7" in raised.value.message
        assert call(pool, COUNTER).values[0] == 1.0
    assert pool.processes_started == 2


def test_threads_share_the_pool_without_mixing_replies():
    source = reward_source("return [float(len(c)) for c in completions]")
    failures = []

    def score(width):
        for _ in range(10):
            completions = ["x" * width] * width
            if call(pool, source, completions=completions).values != [float(width)] * width:
                failures.append(width)

    with SandboxPool(size=2, limits=TEST_LIMITS) as pool:
        threads = [threading.Thread(target=score, args=(w,)) for w in (1, 2, 3, 4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert failures == [] and pool.processes_started == 2


def test_a_closed_pool_refuses_calls_and_leaves_no_process():
    pool = SandboxPool(size=1, limits=TEST_LIMITS)
    call(pool, COUNTER)
    process = pool._idle.queue[0]
    pool.close()
    assert process.proc.poll() is not None
    with pytest.raises(RuntimeError, match="closed"):
        call(pool, COUNTER)


def test_a_process_that_loaded_many_sources_is_replaced():
    limits = SandboxLimits(**{**TEST_LIMITS.as_dict(), "sources_per_process": 2})
    with SandboxPool(size=1, limits=limits) as pool:
        for value in range(3):
            source = reward_source(f"return [{value}.0] * len(completions)")
            assert call(pool, source).values == [float(value)] * 2
    assert pool.processes_started == 2  # after the second source, a fresh process


ORPHAN = """
import sys
sys.path.insert(0, {root!r})
from worker.trainer.rewards.sandbox import SandboxPool
pool = SandboxPool(size=1)
pool.call("def reward(prompts, completions, **c):\\n    return [0.0] * len(completions)\\n", ["p"], ["c"], {{}})
print(pool._idle.queue[0].pid, flush=True)
pool.call("def reward(prompts, completions, **c):\\n    while True: pass\\n", ["p"], ["c"], {{}})
"""


def test_a_process_stuck_in_a_loop_ends_when_its_parent_is_killed():
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    root = str(Path(__file__).resolve().parents[5])
    parent = subprocess.Popen([sys.executable, "-c", ORPHAN.format(root=root)], stdout=subprocess.PIPE, text=True)
    child_pid = int(parent.stdout.readline())
    time.sleep(0.5)  # the child is now spinning in the loop
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and _alive(child_pid):
        time.sleep(0.2)
    assert not _alive(child_pid)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


def test_a_process_that_cannot_start_is_a_sandbox_error_with_what_it_printed(tmp_path, monkeypatch):
    from worker.trainer.rewards.sandbox import process

    broken = tmp_path / "child.py"
    broken.write_text("import sys\nprint('cannot confine myself here', file=sys.stderr)\nsys.exit(1)\n")
    monkeypatch.setattr(process, "CHILD", broken)
    with SandboxPool(size=1, limits=TEST_LIMITS) as pool:
        with pytest.raises(SandboxError) as raised:
            call(pool, COUNTER)
    assert raised.value.kind == "crashed" and "did not start" in raised.value.message
    assert "cannot confine myself here" in raised.value.message
