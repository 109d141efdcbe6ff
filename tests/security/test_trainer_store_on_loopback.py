"""Attack: reach the store of a run's trainer processes from another machine and write orders
into it (the followers read their orders there). Started as the worker starts them, the store
torchrun serves listens on 127.0.0.1 only, and the processes are told to reach it there."""
import subprocess
import sys
import time

from tests.support.sockets import listening_addresses
from worker.trainer_process import PROJECT_ROOT, torchrun_argv

RANK = """
import os, sys, time
from datetime import timedelta
from pathlib import Path
import torch.distributed as dist

folder = Path(sys.argv[1])
store = dist.TCPStore(os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]), is_master=False,
                      timeout=timedelta(seconds=60))
store.set(f"rank/{os.environ['RANK']}", "here")
(folder / f"rank-{os.environ['RANK']}").write_text(os.environ["MASTER_ADDR"])
while not (folder / "release").exists():
    time.sleep(0.1)
"""


def wait_for(predicate, timeout_s: float, what: str, launcher: subprocess.Popen) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if launcher.poll() is not None:
            raise AssertionError(f"torchrun ended before {what}: {launcher.communicate()[0][-3000:]}")
        assert time.monotonic() < deadline, f"no {what} within {timeout_s} s"
        time.sleep(0.2)


def test_the_trainer_processes_store_listens_on_loopback_only(tmp_path):
    script = tmp_path / "rank.py"
    script.write_text(RANK)
    launcher = subprocess.Popen([*torchrun_argv(sys.executable, 2), str(script), str(tmp_path)], cwd=PROJECT_ROOT,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        wait_for(lambda: all((tmp_path / f"rank-{r}").exists() for r in (0, 1)), 120, "rank at the store", launcher)
        listening = listening_addresses(launcher.pid)
        assert listening, "torchrun serves its stores from its own process"
        assert {address for address, _ in listening} == {"127.0.0.1"}, listening
        assert {(tmp_path / f"rank-{r}").read_text() for r in (0, 1)} == {"127.0.0.1"}
    finally:
        (tmp_path / "release").write_text("")
        try:
            output = launcher.communicate(timeout=60)[0]
        except subprocess.TimeoutExpired:
            launcher.kill()
            raise
    assert launcher.returncode == 0, output[-3000:]
