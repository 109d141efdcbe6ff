"""Suggestions the run's pool could start: one that run creation would refuse (runs/fleet/gpu_check.py:
more GPUs than any live worker of the pool has) or that the worker would refuse at start (split_cores
on a machine without a core to spare for the trainer) is dropped. Django side: it asks the fleet,
and only for a suggestion that depends on it."""
from collections.abc import Mapping
from typing import Any

from runs.diagnosis.run_config import cores_needed
from runs.fleet.asking import current_fleet
from runs.fleet.cluster_check import cluster_problems
from runs.fleet.gpu_check import gpu_problems
from worker.broker import DEFAULT_QUEUE

CORE_KNOBS = ("cpu_sharing", "vllm_cpu_cores")


def startable(suggestions: list[dict], config: Mapping[str, Any]) -> list[dict]:
    return [suggestion for suggestion in suggestions if can_start(suggestion["knob"], with_change(config, suggestion))]


def can_start(knob: str, changed: dict[str, Any]) -> bool:
    return pool_can_start(changed) and (knob not in CORE_KNOBS or cores_fit(changed))


def with_change(config: Mapping[str, Any], suggestion: Mapping[str, Any]) -> dict[str, Any]:
    return {**config, **suggestion.get("also_set", {}), suggestion["knob"]: suggestion["proposed"]}


def pool_can_start(config: dict[str, Any]) -> bool:
    """Run creation's own check (it asks the fleet only for a config spanning several GPUs)."""
    return not gpu_problems(config) and not cluster_problems(config)


def cores_fit(config: Mapping[str, Any]) -> bool:
    """Some live worker of the pool that reported its devices has the cores the config's split
    needs; where none reported (the fleet unknown), the suggestion's `why` says the condition."""
    needed = cores_needed(config)
    if needed is None:
        return True
    pool = config.get("worker_pool") or DEFAULT_QUEUE
    reported = [worker.devices.cpu_cores for worker in current_fleet().on_pool(pool) if worker.devices is not None]
    return not reported or max(reported) >= needed
