"""A process group whose leader started it dies: the whole group goes, grandchildren included."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[4]
LEADER = """
import json, subprocess, sys, time
from worker.trainer.processes.lifetime import kill_group_when_parent_dies
watching = kill_group_when_parent_dies(poll_s=0.1)
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
print(json.dumps({"watching": watching, "child": child.pid}), flush=True)
time.sleep(60)
"""
MIDDLE = """
import subprocess, sys, time
leader = subprocess.Popen([sys.executable, "-c", sys.argv[1]], start_new_session=True, stdout=sys.stdout)
print(leader.pid, flush=True)
time.sleep(60)
"""


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"  # a zombie has exited; only its parent's wait is missing


def test_the_whole_group_dies_when_the_leaders_parent_is_killed():
    middle = subprocess.Popen([sys.executable, "-c", MIDDLE, LEADER], cwd=ROOT, stdout=subprocess.PIPE, text=True,
                              env={**os.environ, "PYTHONPATH": str(ROOT)})
    leader_pid = int(middle.stdout.readline())
    started = json.loads(middle.stdout.readline())
    assert started["watching"] is True
    assert alive(leader_pid) and alive(started["child"])

    os.kill(middle.pid, signal.SIGKILL)
    middle.wait()
    deadline = time.monotonic() + 10
    while (alive(leader_pid) or alive(started["child"])) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not alive(leader_pid) and not alive(started["child"])


def test_a_process_that_does_not_lead_its_group_never_watches():
    # A child in its parent's group: killing "its" group would kill the parent's.
    result = subprocess.run(
        [sys.executable, "-c",
         "from worker.trainer.processes.lifetime import kill_group_when_parent_dies as k; print(k())"],
        cwd=ROOT, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=60)
    assert result.stdout.strip() == "False", result.stderr
