"""The actor that runs a whole run on the machine Ray placed it on.

It builds the same RunSupervisor a worker runs today (vLLM server, trainer, watch), on that
machine, with the GPUs Ray gave it. max_concurrency 2: a plain actor runs one method at a time,
and run() blocks for the whole run, so anything else asked of it would wait that long.
"""
import importlib

import ray

from worker.placement.order import settings_on_machine
from worker.trainer.spec import LaunchSpec


def _callable(path: str):
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


@ray.remote(max_concurrency=2)
class RunHost:
    def run(self, launch: dict, settings: dict, supervisor: str) -> str:
        """The run's outcome word, as RunSupervisor.run returns it."""
        gpus = tuple(str(gpu) for gpu in ray.get_gpu_ids())
        build = _callable(supervisor)
        return build(LaunchSpec.model_validate(launch), settings_on_machine(settings, gpus)).run()
