"""Stopping a child and everything it started: TERM first, KILL only where TERM is ignored."""
import signal
import subprocess
import sys
import time

from worker.trainer.processes.groups import kill_process_group, signal_group, stop_process_group

# A group leader with a child of its own; with IGNORE_TERM both ignore SIGTERM.
FAMILY = """
import signal, subprocess, sys, time
if "ignore" in sys.argv:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
child = [sys.executable, "-c", "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN) "
         "if %(ignore)r else None; time.sleep(60)"]
subprocess.Popen(child)
print("ready", flush=True)
time.sleep(60)
"""


def start_family(ignore_term: bool) -> subprocess.Popen:
    argv = [sys.executable, "-c", FAMILY % {"ignore": ignore_term}] + (["ignore"] if ignore_term else [])
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True, start_new_session=True)
    assert process.stdout.readline().strip() == "ready"
    return process


def group_alive(pgid: int) -> bool:
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:  # members exit a moment after the signal
        if not signal_group(pgid, 0):
            return False
        time.sleep(0.05)
    return True


def test_a_group_that_exits_on_term_is_not_killed():
    process = start_family(ignore_term=False)
    assert stop_process_group(process, grace_s=10) == -signal.SIGTERM
    assert not group_alive(process.pid)


def test_a_group_that_ignores_term_is_killed_after_the_grace():
    process = start_family(ignore_term=True)
    started = time.monotonic()
    assert stop_process_group(process, grace_s=0.5) == -signal.SIGKILL
    assert time.monotonic() - started >= 0.5
    assert not group_alive(process.pid)  # the leader's child too


def test_a_leader_that_is_gone_already_is_left_alone():
    process = subprocess.Popen([sys.executable, "-c", "pass"], start_new_session=True)
    process.wait()
    assert stop_process_group(process, grace_s=1) == 0
    assert signal_group(process.pid, signal.SIGTERM) is False


def test_kill_takes_the_orphans_of_an_exited_leader_too():
    orphan_maker = subprocess.Popen(
        [sys.executable, "-c", "import subprocess, sys; subprocess.Popen([sys.executable, '-c', "
                               "'import time; time.sleep(60)']); print('ready', flush=True)"],
        stdout=subprocess.PIPE, text=True, start_new_session=True)
    assert orphan_maker.stdout.readline().strip() == "ready"
    orphan_maker.wait()  # the leader is gone; its child still holds the group
    assert signal_group(orphan_maker.pid, 0)
    kill_process_group(orphan_maker)
    assert not group_alive(orphan_maker.pid)
