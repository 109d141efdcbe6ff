"""A step's time in parts: waiting for rollouts, training, weight sync, evaluation and the rest.

Each part is a metric the trainer logs per step (worker/trainer/loop/training_loop.py); a step
whose parts add up to more than its measured time (clocks read at slightly different moments)
counts their sum as its length, so no part is negative and the shares sum to 1.
"""
from dataclasses import dataclass

from runs.diagnosis.window import Window
from worker.trainer.metric_names import (
    ASYNC_WAIT_FOR_ROLLOUTS_S,
    SYSTEM_STEP_TIME_S,
    SYSTEM_TRAIN_SECONDS,
    SYSTEM_WAIT_FOR_EVALUATION_S,
    SYSTEM_WEIGHT_SYNC_S,
)

PARTS = {
    "waiting_for_rollouts": ASYNC_WAIT_FOR_ROLLOUTS_S,
    "training": SYSTEM_TRAIN_SECONDS,
    "weight_sync": SYSTEM_WEIGHT_SYNC_S,
    "evaluation": SYSTEM_WAIT_FOR_EVALUATION_S,  # logged on sync steps only: 0 elsewhere
}
OTHER = "other"


@dataclass(frozen=True)
class TimeSplit:
    seconds: dict[str, float]  # mean per measured step, by part (OTHER included)
    step_seconds: float  # mean length of a measured step

    def share(self, part: str) -> float:
        return self.seconds[part] / self.step_seconds if self.step_seconds > 0 else 0.0

    def as_rows(self) -> list[dict]:
        return [{"part": part, "seconds": seconds, "share": self.share(part)} for part, seconds in self.seconds.items()]


def split_of(window: Window) -> TimeSplit | None:
    """The mean split over the window's measured steps; None when no step was measured."""
    if not window.measured:
        return None
    totals = dict.fromkeys([*PARTS, OTHER], 0.0)
    for step in window.measured:
        parts = {part: max(0.0, window.at(name, step)) for part, name in PARTS.items()}
        length = max(window.at(SYSTEM_STEP_TIME_S, step), sum(parts.values()))
        for part, seconds in {**parts, OTHER: length - sum(parts.values())}.items():
            totals[part] += seconds
    count = len(window.measured)
    means = {part: total / count for part, total in totals.items()}
    return TimeSplit(means, sum(means.values()))
