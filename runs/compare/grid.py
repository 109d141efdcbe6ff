"""One x grid shared by several runs, and joining their points onto one x axis.

Pure arithmetic (no Django). A grid cuts the integer range [lo, hi] into at most `points`
equal buckets; every run's points in bucket b are drawn at x = start(b), so the runs'
downsampled series line up point for point on a chart and in a notebook.
"""
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

    def starts(self, rows) -> list[tuple[int, float]]:
        """[(bucket, value, ...)] → [(start(bucket), value)], with start() inlined (every point)."""
        lo, span, buckets = self.lo, self.span, self.buckets
        return [(lo - (-bucket * span // buckets), value) for bucket, value, _ in rows]


@dataclass(frozen=True)
class StepScale:
    """How a run's training steps map onto a grid: x = step * per_step (1 for x = step,
    completions per step for x = samples seen)."""
    grid: Grid
    per_step: int = 1

    def bucket_of_step(self, step: int) -> int:
        return self.grid.bucket_of(step * self.per_step)

    def picks(self, lo: int, hi: int, stride: int) -> dict[int, int]:
        """One logged step per bucket that the run's steps [lo, hi] reach, as {step: bucket}:
        the first step at or after the bucket's start that is a multiple of `stride` (the
        run's logging_steps). Arithmetic inlined: this runs for every point of a comparison."""
        grid, per_step = self.grid, self.per_step
        g_lo, span, buckets = grid.lo, grid.span, grid.buckets
        picked: dict[int, int] = {}
        previous = -1
        for bucket in range(self.bucket_of_step(lo), self.bucket_of_step(hi) + 1):
            start = g_lo - (-bucket * span // buckets)
            step = max(lo, -(-start // per_step))
            step = -(-step // stride) * stride
            if previous < step <= hi and (step * per_step - g_lo) * buckets // span == bucket:
                picked[step] = bucket
                previous = step
        return picked


def join(points_by_run: dict, ndigits: int | None = None) -> tuple[list, dict]:
    """{run: [(x, y), ...]} → (sorted x values, {run: [y or None per x]}).

    Runs that have nothing at some x get None there, which charts draw as a gap (or span).
    `ndigits` rounds x first, so that wall times a millisecond apart share one slot.
    """
    if ndigits is not None:  # rounded once per point: this runs for every point of a comparison
        points_by_run = {run: [(round(x, ndigits), y) for x, y in points] for run, points in points_by_run.items()}
    xs = sorted({x for points in points_by_run.values() for x, _ in points})
    slot = {x: index for index, x in enumerate(xs)}
    columns = {}
    for run, points in points_by_run.items():
        column = [None] * len(xs)
        for x, y in points:
            column[slot[x]] = y
        columns[run] = column
    return xs, columns
