"""The recent steps a diagnosis looks at: the last logged steps, the run's first left out (it
holds start-up: loading the model, the server's first requests)."""
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from math import isfinite
from statistics import fmean

from worker.trainer.metric_names import ASYNC_WAIT_FOR_ROLLOUTS_S, SYSTEM_STEP_TIME_S, SYSTEM_TRAIN_SECONDS

WINDOW_STEPS = 20
# What every training step logs: a step with none of them (an evaluation's own) is not one.
STEP_METRICS = (SYSTEM_STEP_TIME_S, ASYNC_WAIT_FOR_ROLLOUTS_S, SYSTEM_TRAIN_SECONDS)


@dataclass(frozen=True)
class Window:
    """Per metric, {step: value} over the window's steps; `measured` are the steps with a step time."""
    values: Mapping[str, Mapping[int, float]]
    steps: tuple[int, ...]
    measured: tuple[int, ...]

    @classmethod
    def recent(cls, series: Mapping[str, Sequence[tuple[int, float]]], size: int = WINDOW_STEPS) -> "Window":
        """Non-finite values (a NaN or an infinity a step logged) are left out, as if not logged:
        one would make every mean over it, and the API's JSON, not a number."""
        finite = {name: [(int(step), float(value)) for step, value in points if isfinite(value)]
                  for name, points in series.items()}
        logged = sorted({step for name in STEP_METRICS for step, _ in finite.get(name, ())} - {0, 1})
        steps = tuple(logged[-size:])
        kept = set(steps)
        values = {name: {step: value for step, value in points if step in kept} for name, points in finite.items()}
        measured = tuple(step for step in steps if step in values.get(SYSTEM_STEP_TIME_S, {}))
        return cls(values, steps, measured)

    @property
    def bounds(self) -> list[int] | None:
        return [self.steps[0], self.steps[-1]] if self.steps else None

    def has(self, name: str) -> bool:
        return bool(self.values.get(name))

    def at(self, name: str, step: int, absent: float = 0.0) -> float:
        return self.values.get(name, {}).get(step, absent)

    def mean(self, name: str) -> float | None:
        """The mean over the window's steps that logged `name`; None where none did."""
        points = self.values.get(name)
        return fmean(points.values()) if points else None

    def ordered(self, name: str) -> list[tuple[int, float]]:
        return sorted(self.values.get(name, {}).items())
