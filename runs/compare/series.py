"""Several runs' metric series on one x axis (step, wall time or samples seen), downsampled
in the database.

Small series are reduced the way runs/metrics_query.py does it: the database groups the
points into buckets and returns each bucket's mean. That reads every point, which costs
about 0.6 µs a row on SQLite: 8 runs × 100,000 points is half a second per metric. Long
series therefore take one logged point per bucket instead, fetched by index lookups on
(run, name, step) — about 5 µs a point, whatever the series' length. Charts smooth on
the client, so the picked points read as well as the means at this density.
"""
from dataclasses import dataclass, field
from datetime import datetime, timezone

from django.db.models import Avg, BigIntegerField, F, Min, OuterRef, Subquery
from django.db.models.functions import Cast

from runs.compare.grid import Grid, StepScale, join
from runs.models import MetricPoint
from worker.trainer.config import TrainingConfig

X_AXES = {"step": "Step", "time": "Wall time (s)", "samples": "Samples seen"}
# A series of up to this many points per bucket it covers is averaged in the database;
# a longer one is picked point by point (see the module docstring).
MEANS_ROWS_PER_BUCKET = 4
DEFAULTS = {name: info.default for name, info in TrainingConfig.model_fields.items()}


@dataclass(frozen=True)
class Bounds:
    lo: int
    hi: int
    last_value: float
    first_time: datetime


@dataclass
class RunPoints:
    """One run's points of one metric: (bucket or step, value, time) before x is assigned."""
    rows: list[tuple[int, float, datetime | None]]
    downsampled: bool


@dataclass
class MetricSeries:
    """Per run, the (x, y) points of one metric; `joined()` puts them on one x axis."""
    points: dict[int, list[tuple[float, float]]] = field(default_factory=dict)
    downsampled: bool = False

    def joined(self) -> dict:
        xs, columns = join(self.points, ndigits=3)
        return {"x": xs, "values": {str(run): column for run, column in columns.items()},
                "missing": [run for run, points in self.points.items() if not points],
                "downsampled": self.downsampled}


def samples_per_step(config: dict) -> int:
    """Completions trained per optimizer step: each step trains exactly this many."""
    knob = {**DEFAULTS, **config}
    return int(knob["per_device_train_batch_size"]) * int(knob["gradient_accumulation_steps"])


def logging_stride(config: dict) -> int:
    return max(1, int({**DEFAULTS, **config}["logging_steps"]))


def step_bounds(run_ids: list[int], names: list[str]) -> dict[tuple[int, str], Bounds]:
    """First and last step, and the last value, of each (run, metric): index seeks, no scan."""
    from runs.models import Run

    annotations = {}
    for index, name in enumerate(names):
        points = MetricPoint.objects.filter(run=OuterRef("pk"), name=name)
        annotations[f"lo{index}"] = Subquery(points.order_by("step").values("step")[:1])
        annotations[f"hi{index}"] = Subquery(points.order_by("-step").values("step")[:1])
        annotations[f"last{index}"] = Subquery(points.order_by("-step").values("value")[:1])
        annotations[f"first_time{index}"] = Subquery(points.order_by("step").values("time")[:1])
    rows = Run.objects.filter(pk__in=run_ids).annotate(**annotations).values("pk", *annotations)
    bounds = {}
    for row in rows:
        for index, name in enumerate(names):
            if row[f"lo{index}"] is not None:
                bounds[row["pk"], name] = Bounds(row[f"lo{index}"], row[f"hi{index}"], row[f"last{index}"],
                                                 _as_datetime(row[f"first_time{index}"]))
    return bounds


def fetch_points(run, name: str, bounds: Bounds, scale: StepScale, with_time: bool) -> RunPoints:
    """The run's points of `name` reduced to at most one per bucket of `scale`'s grid."""
    stride = logging_stride(run.config)
    covered = scale.bucket_of_step(bounds.hi) - scale.bucket_of_step(bounds.lo) + 1
    expected_rows = (bounds.hi - bounds.lo) // stride + 1
    if expected_rows <= MEANS_ROWS_PER_BUCKET * covered:
        return _bucket_means(run.pk, name, scale, with_time, downsampled=expected_rows > covered)
    picked = _picked_points(run.pk, name, scale, scale.pick_steps(bounds.lo, bounds.hi, stride), with_time)
    if len(picked.rows) * 2 < covered:
        # Steps were not logged where the stride said (resumed or irregular runs): average instead.
        return _bucket_means(run.pk, name, scale, with_time, downsampled=True)
    return picked


def _bucket_means(run_id: int, name: str, scale: StepScale, with_time: bool, downsampled: bool) -> RunPoints:
    grid = scale.grid
    # 64-bit arithmetic: steps up to 10^7 times samples per step times buckets overflow 32 bits.
    x = Cast(F("step"), BigIntegerField()) * scale.per_step
    aggregates = {"mean": Avg("value")}
    if with_time:
        aggregates["first_time"] = Min("time")
    rows = (
        MetricPoint.objects.filter(run_id=run_id, name=name)
        .annotate(bucket=(x - grid.lo) * grid.buckets / grid.span)
        .values("bucket").annotate(**aggregates).order_by("bucket")
    )
    return RunPoints([(row["bucket"], row["mean"], row.get("first_time")) for row in rows], downsampled)


def _picked_points(run_id: int, name: str, scale: StepScale, steps: list[int], with_time: bool) -> RunPoints:
    columns = ["step", "value", "time"] if with_time else ["step", "value"]
    rows = MetricPoint.objects.filter(run_id=run_id, name=name, step__in=steps).values_list(*columns)
    by_bucket: dict[int, list] = {}
    for row in rows:
        by_bucket.setdefault(scale.bucket_of_step(row[0]), []).append(row)
    reduced = []
    for bucket in sorted(by_bucket):
        # A step logged twice (a run resumed from an earlier checkpoint) counts once, averaged.
        same = by_bucket[bucket]
        time = min(row[2] for row in same) if with_time else None
        reduced.append((bucket, sum(row[1] for row in same) / len(same), time))
    return RunPoints(reduced, downsampled=True)


def compare_series(runs: list, names: list[str], x_axis: str, points: int) -> dict[str, MetricSeries]:
    """Each metric's series for each run, at most `points` per run, on the `x_axis` scale.

    Step and samples-seen series share one grid per metric, so the runs' points fall on the
    same x values. Wall time differs by run by nature: each run is bucketed by its own steps
    and the x values are seconds since the run started.
    """
    bounds = step_bounds([run.pk for run in runs], names)
    if x_axis == "time":
        origins = {run.pk: time_origin(run, [b for (pk, _), b in bounds.items() if pk == run.pk]) for run in runs}
        return {name: _by_wall_time(runs, name, bounds, points, origins) for name in names}
    return {name: _on_shared_grid(runs, name, bounds, points, x_axis) for name in names}


def _on_shared_grid(runs: list, name: str, bounds: dict, points: int, x_axis: str) -> MetricSeries:
    per_step = {run.pk: samples_per_step(run.config) if x_axis == "samples" else 1 for run in runs}
    present = [(run, bounds[run.pk, name]) for run in runs if (run.pk, name) in bounds]
    series = MetricSeries(points={run.pk: [] for run in runs})
    if not present:
        return series
    grid = Grid.over(min(b.lo * per_step[run.pk] for run, b in present),
                     max(b.hi * per_step[run.pk] for run, b in present), points)
    for run, run_bounds in present:
        fetched = fetch_points(run, name, run_bounds, StepScale(grid, per_step[run.pk]), with_time=False)
        series.points[run.pk] = [(grid.start(bucket), value) for bucket, value, _ in fetched.rows]
        series.downsampled |= fetched.downsampled
    return series


def _by_wall_time(runs: list, name: str, bounds: dict, points: int, origins: dict) -> MetricSeries:
    series = MetricSeries(points={run.pk: [] for run in runs})
    for run in runs:
        run_bounds = bounds.get((run.pk, name))
        if run_bounds is None:
            continue
        scale = StepScale(Grid.over(run_bounds.lo, run_bounds.hi, points))
        fetched = fetch_points(run, name, run_bounds, scale, with_time=True)
        origin = origins[run.pk]
        series.points[run.pk] = [((time - origin).total_seconds(), value) for _, value, time in fetched.rows]
        series.downsampled |= fetched.downsampled
    return series


def time_origin(run, run_bounds: list[Bounds]) -> datetime | None:
    """When the run's clock starts: its first start, or its first metric if that came earlier
    (points imported or reported before the status change arrived)."""
    candidates = [t for t in (run.started_at, *(b.first_time for b in run_bounds)) if t is not None]
    return min(candidates, default=None)


def _as_datetime(value) -> datetime | None:
    """A subquery's datetime comes back as text on SQLite (the outer query does not know its type)."""
    if value is None or isinstance(value, datetime):
        return value
    parsed = datetime.fromisoformat(value)
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)
