"""Attack: reach the store of a run's trainer processes from another machine and write orders
into it (the followers read their orders there), or their gloo connections and add to their
gradients. Started as the worker starts them, the stores torchrun serves and the processes'
own gloo listeners are on 127.0.0.1 only, and the processes are told to reach the store there."""
import os
import subprocess
import time

from tests.support.sockets import listening_addresses
from worker.trainer_process import PROJECT_ROOT, trainer_command

RANK = """
import os, sys, time
from datetime import timedelta
from pathlib import Path
import torch
import torch.distributed as dist

folder = Path(sys.argv[1])
store = dist.TCPStore(os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]), is_master=False,
                      timeout=timedelta(seconds=60))
store.set(f"rank/{os.environ['RANK']}", "here")
dist.init_process_group("gloo")  # as DDP on CPUs does
dist.all_reduce(torch.ones(1))
(folder / f"rank-{os.environ['RANK']}").write_text(f"{os.environ['MASTER_ADDR']} {os.getpid()}")
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
    argv, env = trainer_command(tmp_path / "spec.json", gpus=None, processes=2)
    argv = argv[:argv.index("-m", 2)] + [str(script), str(tmp_path)]  # our script where the trainer would be
    launcher = subprocess.Popen(argv, cwd=PROJECT_ROOT, env={**os.environ, **env},
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        wait_for(lambda: all((tmp_path / f"rank-{r}").exists() for r in (0, 1)), 120, "rank at the store", launcher)
        listening = listening_addresses(launcher.pid)
        assert len(listening) == 2, "torchrun serves its two stores from its own process"
        ranks = [(tmp_path / f"rank-{r}").read_text().split() for r in (0, 1)]
        for _, pid in ranks:
            listening += listening_addresses(int(pid))
        assert {address for address, _ in listening} == {"127.0.0.1"}, listening
        assert {master_addr for master_addr, _ in ranks} == {"127.0.0.1"}
    finally:
        (tmp_path / "release").write_text("")
        try:
            output = launcher.communicate(timeout=60)[0]
        except subprocess.TimeoutExpired:
            launcher.kill()
            raise
    assert launcher.returncode == 0, output[-3000:]
