"""A step's time in parts: waiting for rollouts, training, weight sync, evaluation and the rest.

Each part is a metric the trainer logs per step (worker/trainer/loop/training_loop.py); a step
whose parts add up to more than its measured time (clocks read at slightly different moments)
counts their sum as its length, so no part is negative and the shares sum to 1.
"""
from dataclasses import dataclass

from runs.diagnosis.window import STEP_TIME, Window

PARTS = {
    "waiting_for_rollouts": "async/wait_for_rollouts_s",
    "training": "system/train_seconds",
    "weight_sync": "system/weight_sync_s",
    "evaluation": "system/wait_for_evaluation_s",  # logged on sync steps only: 0 elsewhere
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
        length = max(window.at(STEP_TIME, step), sum(parts.values()))
        for part, seconds in {**parts, OTHER: length - sum(parts.values())}.items():
            totals[part] += seconds
    count = len(window.measured)
    seconds = {part: total / count for part, total in totals.items()}
    return TimeSplit(seconds, sum(seconds.values()))
