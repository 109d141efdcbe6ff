"""A trainer over two machines, as two torchruns started the way each machine's host starts them
(worker/trainer_process.py with a Rendezvous), on one host with a folder of its own for each
"machine": the first machine's store listens on its cluster address alone, and what a process of
the second machine writes into a checkpoint reaches the first machine's folder and leaves its own."""
import os
import subprocess
import time

from tests.support.sockets import listening_addresses
from worker.trainer.distributed.rendezvous import Rendezvous, free_port_on
from worker.trainer_process import PROJECT_ROOT, trainer_command

FIRST = "127.0.0.2"  # on loopback, but not the address a store bound to every interface would show
RANK = """
import os, sys, time
from pathlib import Path
import torch.distributed as dist
from worker.trainer.checkpoints.relay import relay_to_leader
from worker.trainer.distributed.topology import Topology

folder = Path(sys.argv[1]) / "step-1" / "optimizer"  # a checkpoint's folder on this machine
folder.mkdir(parents=True, exist_ok=True)
dist.init_process_group("gloo")
topology = Topology.from_env()
(folder / f"__{topology.rank}_0.distcp").write_bytes(bytes([topology.rank + 1]) * int(sys.argv[2]))
relay_to_leader(folder.parent, topology)
(Path(sys.argv[1]) / f"rank-{topology.rank}").write_text(f"{topology.machine} {os.environ['MASTER_ADDR']}")
while not (Path(sys.argv[1]).parent / "release").exists():
    time.sleep(0.1)
"""
SIZE = 40 * 2**20 + 5  # three chunks, the last a short one


def launch(tmp_path, machines: Rendezvous, node_rank: int) -> subprocess.Popen:
    script, folder = tmp_path / "rank.py", tmp_path / f"machine-{node_rank}"
    argv, env = trainer_command(tmp_path / "spec.json", gpus=None, processes=1, cpu_count=1, machines=machines,
                                node_rank=node_rank)
    argv = argv[:argv.index("-m", 2)] + [str(script), str(folder), str(SIZE)]
    return subprocess.Popen(argv, cwd=PROJECT_ROOT, env={**os.environ, **env, "PYTHONPATH": str(PROJECT_ROOT)},
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def test_the_first_machines_store_listens_on_its_address_and_the_seconds_checkpoint_part_reaches_it(tmp_path):
    (tmp_path / "rank.py").write_text(RANK)
    machines = Rendezvous((FIRST, "127.0.0.1"), port=free_port_on(FIRST))
    first, second = launch(tmp_path, machines, 0), launch(tmp_path, machines, 1)
    try:
        deadline = time.monotonic() + 120
        while not all((tmp_path / f"machine-{m}" / f"rank-{m}").exists() for m in (0, 1)):
            for launcher in (first, second):
                assert launcher.poll() is None, launcher.communicate()[0][-3000:]
            assert time.monotonic() < deadline, "the two machines never met"
            time.sleep(0.2)
        assert {address for address, _ in listening_addresses(first.pid)} == {FIRST}
        assert (tmp_path / "machine-1" / "rank-1").read_text() == f"1 {FIRST}"  # the second machine's, told where
    finally:
        (tmp_path / "release").write_text("")
        outputs = [launcher.communicate(timeout=60)[0] for launcher in (first, second)]
    assert [first.returncode, second.returncode] == [0, 0], outputs
    relayed = tmp_path / "machine-0" / "step-1" / "optimizer" / "__1_0.distcp"
    assert relayed.read_bytes() == bytes([2]) * SIZE
    assert not (tmp_path / "machine-1" / "step-1").exists()  # sent, then removed there
    assert (tmp_path / "machine-0" / "step-1" / "optimizer" / "__0_0.distcp").stat().st_size == SIZE
