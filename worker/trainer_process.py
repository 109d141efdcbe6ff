"""The trainer as a child process: its command line, its output, and stopping it.

One trainer process runs as `python -m worker.trainer` (on the GPU it is given, or the CPU);
several (one per trainer GPU, or trainer_processes on a CPU) under torchrun, which starts
them, gives them their ranks and ends them all when one dies.
"""
import collections
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from collections.abc import Callable

from worker.trainer.distributed.bound_torchrun import LOOPBACK
from worker.trainer.distributed.rendezvous import Rendezvous
from worker.trainer.inference.cpu_sharing import allowed_cpus
from worker.trainer.processes.groups import stop_process_group
from worker.trainer.processes.lifetime import kill_me_with_parent
from worker.trainer.processes.output_lines import last_redraw
from worker.trainer.processes.run_environment import run_environment

PROJECT_ROOT = Path(__file__).resolve().parents[1]


def trainer_command(spec_path: Path, gpus: str | None, processes: int | None = None,
                    python: str = sys.executable, cpu_count: int | None = None,
                    machines: Rendezvous | None = None, node_rank: int = 0) -> tuple[list[str], dict]:
    """argv and extra environment for the trainer on `gpus` (a CUDA_VISIBLE_DEVICES list) or the
    CPU; `processes`: the config's trainer_processes (empty: one per GPU, one on a CPU). With
    `machines`, this machine's share (node `node_rank`) of a trainer over several."""
    count = processes or (len(gpus.split(",")) if gpus else 1)
    env = {"CUDA_VISIBLE_DEVICES": gpus} if gpus else {}
    trainer = ["-m", "worker.trainer", "--spec", str(spec_path)]
    if count == 1 and machines is None:
        return [python, *trainer], env
    if not gpus:  # torchrun would give each process one thread; they share the cores instead
        env["OMP_NUM_THREADS"] = str(max(1, (cpu_count or len(allowed_cpus())) // count))
    if machines is not None:
        # The interface holding this machine's cluster address, unless the node's operator named one.
        interface = os.environ.get("GLOO_SOCKET_IFNAME") or machines.interface_of(node_rank)
        env["GLOO_SOCKET_IFNAME"] = interface
        if gpus:  # NCCL's bootstrap and socket transport, where no InfiniBand carries it
            env["NCCL_SOCKET_IFNAME"] = os.environ.get("NCCL_SOCKET_IFNAME") or interface
        return [*machines.torchrun_argv(python, count, node_rank), *trainer], env
    # Gloo's connections between the processes (DDP on CPUs) carry gradients unauthenticated: on
    # loopback like the store, not on the interface the host name resolves to.
    env["GLOO_SOCKET_IFNAME"] = os.environ.get("GLOO_SOCKET_IFNAME", "lo")
    return [*torchrun_argv(python, count), *trainer], env


def torchrun_argv(python: str, processes: int) -> list[str]:
    """torchrun for `processes` processes on this machine, its stores on loopback only
    (distributed/bound_torchrun.py), the ranks told to reach them at 127.0.0.1."""
    return [python, "-m", "worker.trainer.distributed.bound_torchrun", "--standalone", "--nnodes", "1",
            "--nproc-per-node", str(processes), "--local-addr", LOOPBACK,
            "--monitor-interval", "1"]  # a rank that dies ends the others within a second or so


class RateLimiter:
    """At most `per_second` events on average, bursts up to one second's worth."""

    def __init__(self, per_second: float, clock=time.monotonic):
        self.rate, self.clock = per_second, clock
        self.tokens, self.last = per_second, clock()

    def allow(self) -> bool:
        now = self.clock()
        self.tokens = min(self.rate, self.tokens + (now - self.last) * self.rate)
        self.last = now
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        return False


class TrainerProcess:
    def __init__(self, argv: list[str], env: dict, log_path: Path, forward: Callable[[str], None],
                 lines_per_s: float = 20.0, tail_lines: int = 40):
        self.argv, self.env, self.log_path = argv, env, log_path
        self.forward, self.limiter = forward, RateLimiter(lines_per_s)
        self.tail: collections.deque[str] = collections.deque(maxlen=tail_lines)
        self.skipped = 0
        self.process: subprocess.Popen | None = None

    def start(self) -> "TrainerProcess":
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self.process = subprocess.Popen(
            self.argv, cwd=PROJECT_ROOT, env=run_environment({**self.env, "PYTHONUNBUFFERED": "1"}),
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
            preexec_fn=kill_me_with_parent)
        self._reader = threading.Thread(target=self._read, name="trainer-output", daemon=True)
        self._reader.start()
        return self

    def _read(self) -> None:
        assert self.process is not None and self.process.stdout is not None  # started with a pipe
        with self.log_path.open("ab") as log:
            for raw in self.process.stdout:
                log.write(raw)
                log.flush()
                line = last_redraw(raw.decode("utf-8", "replace").rstrip())
                self.tail.append(line)
                if line and self.limiter.allow():
                    self.forward(line)
                elif line:
                    self.skipped += 1

    def exit_code(self) -> int | None:
        return self.process.poll() if self.process is not None else None

    def stop(self, grace_s: float = 10.0) -> None:
        """SIGTERM to its process group, then SIGKILL after `grace_s`."""
        if self.process is not None:
            stop_process_group(self.process, grace_s)
