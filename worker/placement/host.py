"""The actor that runs a whole run on the machine Ray placed it on.

It builds the same RunSupervisor a worker runs today (vLLM server, trainer, watch), on that
machine, with the GPUs Ray gave it. max_concurrency 2: a plain actor runs one method at a time,
and run() blocks for the whole run, so anything else asked of it would wait that long.
"""
import importlib
import os
from pathlib import Path

import ray
from ray.exceptions import GetTimeoutError, RayActorError

from worker.placement.order import settings_on_machine
from worker.trainer.spec import LaunchSpec


def _callable(path: str):
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


def _parents_environment() -> dict[str, str]:
    """The raylet's environment (the node's `ray start`): an actor's parent is its node's raylet."""
    try:
        raw = Path(f"/proc/{os.getppid()}/environ").read_bytes()
    except OSError:
        return {}
    return dict(entry.split("=", 1) for entry in raw.decode(errors="replace").split("\0") if "=" in entry)


def drop_rays_thread_cap() -> None:
    """Ray sets OMP_NUM_THREADS to an actor's CPUs (its slot, here 1) where the node did not set
    it. The run owns the machine: vLLM and the trainer size their threads as on any worker (the
    trainer's command sets its own), so a cap the node's operator did not set goes."""
    node = _parents_environment()
    if node and "OMP_NUM_THREADS" not in node:
        os.environ.pop("OMP_NUM_THREADS", None)


def stop_hosts(hosts: list, timeout_s: float = 60.0) -> None:
    """Asks each host actor of a run's further machines to stop what it started."""
    for host in hosts:
        try:
            ray.get(host.stop.remote(), timeout=timeout_s)
        except (RayActorError, GetTimeoutError):
            pass  # gone with its machine, or stuck: the placement group's removal ends it


@ray.remote(max_concurrency=2)  # type: ignore[call-overload]  # ray's overloads omit actor options
class RunHost:
    def run(self, launch: dict, settings: dict, supervisor: str, peers=None, inference=None) -> str:
        """The run's outcome word, as RunSupervisor.run returns it. `peers`: the hosts of the
        trainer's further machines (trainer_machines.py), for a trainer over several; `inference`:
        vLLM's machines (inference_machines.py), where it has its own."""
        drop_rays_thread_cap()
        gpus = tuple(str(gpu) for gpu in ray.get_gpu_ids())
        build = _callable(supervisor)
        spec, on_machine = LaunchSpec.model_validate(launch), settings_on_machine(settings, gpus)
        others = {name: value for name, value in (("peers", peers), ("inference", inference)) if value}
        return build(spec, on_machine, **others).run()
