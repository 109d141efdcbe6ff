"""Made-up step series for the diagnosis engine: every step logs the same values unless told."""
from worker.trainer.config import CPU_DEMO, TrainingConfig

# The CPU demo's knobs, complete (as a run freezes them): 2 groups of 8 a step, max_staleness 4,
# max_inflight_tasks 16, weight sync every step.
CONFIG = TrainingConfig.model_validate(CPU_DEMO).model_dump()


def series(values: dict[str, float], steps: int = 15) -> dict[str, list[tuple[int, float]]]:
    """Each metric at steps 1..`steps`, one value throughout."""
    return {name: [(step, float(value)) for step in range(1, steps + 1)] for name, value in values.items()}


def step_of(wait: float, train: float, sync: float = 0.0, evaluation: float = 0.0, other: float = 0.5,
            **more: float) -> dict[str, float]:
    """A step's timings, its length their sum plus `other`; `more`: metrics by name with / as __."""
    return {"system/step_time_s": wait + train + sync + evaluation + other, "async/wait_for_rollouts_s": wait,
            "system/train_seconds": train, "system/weight_sync_s": sync, "system/wait_for_evaluation_s": evaluation,
            **{name.replace("__", "/"): value for name, value in more.items()}}
