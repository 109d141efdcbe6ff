"""How vLLM and the trainer share a CPU's cores: split them, take turns, or overlap.

Both are many-threaded (OpenMP): side by side on the same cores they lose most of their time
at barriers waiting for threads the other descheduled. split_cores (here) pins vLLM's process
group to cores of its own and lets the trainer take every core back while vLLM has no
requests; take_turns (inference/time_slicing.py) pauses vLLM while a step trains; overlap is
for GPUs. `python -m bench.trainer` measures them; figures in bench/README.md. The launch and
the trainer both derive the cores with `generation_cpus`, so they agree on the split.
"""
import os
import time
from typing import Literal
from collections.abc import Callable

from worker.trainer.config import TrainingConfig

Mode = Literal["split_cores", "take_turns", "overlap"]

# The launch tells the server's wrapper (vllm_cli.py) which cores to pin its process group to.
SERVER_CPUS_VARIABLE = "GRPO_VLLM_CPUS"


class CpuSharingError(ValueError):
    """The config asks for a split this machine's cores cannot give."""


def allowed_cpus() -> list[int]:
    """The cores this process may run on (a container's or taskset's limit included)."""
    return sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else list(range(os.cpu_count() or 1))


def sharing_mode(setting: Mode | Literal["auto"], training_on_gpu: bool, cpu_count: int) -> Mode:
    """auto: overlap on GPUs, split_cores on a CPU with 2 cores or more, take_turns on one."""
    if setting != "auto":
        return setting
    if training_on_gpu:
        return "overlap"
    return "split_cores" if cpu_count >= 2 else "take_turns"


def generation_cpus(config: TrainingConfig, cpus: list[int], training_on_gpu: bool) -> list[int] | None:
    """The cores vLLM keeps under split_cores (the last ones), or None when the cores are not split."""
    if sharing_mode(config.cpu_sharing, training_on_gpu, len(cpus)) != "split_cores":
        return None
    count = config.vllm_cpu_cores or max(1, len(cpus) // 2)
    if count >= len(cpus):
        raise CpuSharingError(
            f"cpu_sharing split_cores: vllm_cpu_cores ({count}) must leave the trainer at least one of the "
            f"{len(cpus)} cores this machine lets it use ({format_cpus(cpus)}); lower vllm_cpu_cores or "
            "choose take_turns")
    return sorted(cpus)[-count:]


def format_cpus(cpus: list[int]) -> str:
    """As VLLM_CPU_OMP_THREADS_BIND and taskset write a core list: "1" or "2,3"."""
    return ",".join(str(cpu) for cpu in cpus)


class CoreHandover:
    """The trainer's side of split_cores: its intra-op threads, set before each micro-batch.

    `server_has_work` (RolloutWorker.server_has_work) says whether vLLM is generating or
    about to; then the trainer keeps off its cores. The granularity is a micro-batch (about
    a second on 2 cores): a thread count changes only between parallel regions.
    """

    def __init__(self, server_has_work: Callable[[], bool], all_threads: int, beside_server_threads: int,
                 set_threads: Callable[[int], None] | None = None, clock: Callable[[], float] = time.perf_counter):
        self.server_has_work = server_has_work
        self.all_threads, self.beside_server_threads = all_threads, beside_server_threads
        self._set_threads = set_threads or _set_torch_threads
        self._clock = clock
        self._threads: int | None = None
        self._since: float | None = None
        self._beside_s = 0.0

    def before_micro_batch(self) -> None:
        self._account()
        threads = self.beside_server_threads if self.server_has_work() else self.all_threads
        if threads != self._threads:
            self._set_threads(threads)
            self._threads = threads

    def step_done(self) -> float:
        """Seconds of the step just trained beside generation, on fewer threads."""
        self._account()
        self._since, seconds, self._beside_s = None, self._beside_s, 0.0
        return seconds

    @property
    def _on_fewer_threads(self) -> bool:
        return self._threads == self.beside_server_threads and self.beside_server_threads < self.all_threads

    def _account(self) -> None:
        """Adds the time since the last call to the step's time beside generation, if it was."""
        now = self._clock()
        if self._since is not None and self._on_fewer_threads:
            self._beside_s += now - self._since
        self._since = now


def _set_torch_threads(count: int) -> None:
    import torch

    torch.set_num_threads(count)
