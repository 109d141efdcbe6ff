"""One x grid shared by several runs, and joining their points onto one x axis.

Pure arithmetic (no Django). A grid cuts the integer range [lo, hi] into at most `points`
equal buckets; every run's points in bucket b are drawn at x = start(b), so the runs'
downsampled series line up point for point on a chart and in a notebook.
"""
import math
from dataclasses import dataclass
from functools import cached_property


@dataclass(frozen=True)
class Grid:
    lo: int
    hi: int
    buckets: int

    @classmethod
    def over(cls, lo: int, hi: int, points: int) -> "Grid":
        # Never more buckets than integers in the range: then each bucket is one x value.
        return cls(lo, hi, max(1, min(points, hi - lo + 1)))

    @cached_property  # read for every point: computed once per grid
    def span(self) -> int:
        return self.hi - self.lo + 1

    def bucket_of(self, x: int) -> int:
        return (x - self.lo) * self.buckets // self.span

    def start(self, bucket: int) -> int:
        """The smallest integer x in the bucket (ceil(b * span / buckets) past lo)."""
        return self.lo - (-bucket * self.span // self.buckets)


@dataclass(frozen=True)
class StepScale:
    """How a run's training steps map onto a grid: x = step * per_step (1 for x = step,
    completions per step for x = samples seen)."""
    grid: Grid
    per_step: int = 1

    def bucket_of_step(self, step: int) -> int:
        return self.grid.bucket_of(step * self.per_step)

    def pick_steps(self, lo: int, hi: int, stride: int) -> list[int]:
        """One logged step per bucket that the run's steps [lo, hi] reach: the first step at
        or after the bucket's start that is a multiple of `stride` (the run's logging_steps)."""
        picked = []
        first = self.bucket_of_step(lo)
        last = self.bucket_of_step(hi)
        for bucket in range(first, last + 1):
            step = _round_up(max(lo, math.ceil(self.grid.start(bucket) / self.per_step)), stride)
            if step <= hi and self.bucket_of_step(step) == bucket and (not picked or step > picked[-1]):
                picked.append(step)
        return picked


def _round_up(value: int, multiple: int) -> int:
    return -(-value // multiple) * multiple


def join(points_by_run: dict, ndigits: int | None = None) -> tuple[list, dict]:
    """{run: [(x, y), ...]} → (sorted x values, {run: [y or None per x]}).

    Runs that have nothing at some x get None there, which charts draw as a gap (or span).
    `ndigits` rounds x first, so that wall times a millisecond apart share one slot.
    """
    def key(x):
        return round(x, ndigits) if ndigits is not None else x

    xs = sorted({key(x) for points in points_by_run.values() for x, _ in points})
    slot = {x: index for index, x in enumerate(xs)}
    columns = {}
    for run, points in points_by_run.items():
        column = [None] * len(xs)
        for x, y in points:
            column[slot[key(x)]] = y
        columns[run] = column
    return xs, columns
