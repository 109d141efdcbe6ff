"""Several runs' metric series on one x axis: step, wall time or samples seen.

Step and samples-seen series share one grid per metric, so the runs' points fall on the
same x values. Wall time differs by run by nature: each run is bucketed by its own steps and
its x values are seconds since it started. How points are read and reduced: fetch.py.
"""
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import cast

from runs.compare.fetch import Bounds, epoch_us, fetch_metric, plan, step_bounds
from runs.compare.grid import Grid, StepScale, join
from worker.trainer.config import TrainingConfig

X_AXES = {"step": "Step", "time": "Wall time (s)", "samples": "Samples seen"}
DEFAULTS = {name: info.default for name, info in TrainingConfig.model_fields.items()}


@dataclass
class MetricSeries:
    """Per run, the (x, y) points of one metric; `joined()` puts them on one x axis."""
    points: dict[int, Sequence[tuple[float, float]]] = field(default_factory=dict)
    downsampled: bool = False

    def joined(self) -> dict:
        xs, columns = join(self.points, ndigits=3)
        return {"x": xs, "values": {str(run): column for run, column in columns.items()},
                "missing": [run for run, points in self.points.items() if not points],
                "downsampled": self.downsampled}


def samples_per_step(config: dict) -> int:
    """Completions trained per optimizer step: each step trains exactly this many."""
    return _count_knob(config, "per_device_train_batch_size") * _count_knob(config, "gradient_accumulation_steps")


def logging_stride(config: dict) -> int:
    return _count_knob(config, "logging_steps")


def _count_knob(config: dict, name: str) -> int:
    """A positive whole-number knob; a config edited into nonsense (the admin allows it) reads as the default."""
    value = config.get(name, DEFAULTS[name])
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else DEFAULTS[name]


def compare_series(runs: list, names: list[str], x_axis: str, points: int,
                   bounds: dict[tuple[int, str], Bounds] | None = None) -> dict[str, MetricSeries]:
    """Each metric's series for each run, at most `points` per run, on the `x_axis` scale.
    `bounds`: step_bounds() already read for these runs and (at least) these names."""
    if bounds is None:
        bounds = step_bounds([run.pk for run in runs], names)
    else:
        wanted = set(names)  # other metrics' first times must not move the wall-clock origin
        bounds = {key: one for key, one in bounds.items() if key[1] in wanted}
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
    plans = [plan(run.pk, b, StepScale(grid, per_step[run.pk]), logging_stride(run.config)) for run, b in present]
    for run_id, fetched in fetch_metric(name, plans, with_time=False).items():
        series.points[run_id] = grid.starts(fetched.rows)
        series.downsampled |= fetched.downsampled
    return series


def _by_wall_time(runs: list, name: str, bounds: dict, points: int, origins: dict) -> MetricSeries:
    series = MetricSeries(points={run.pk: [] for run in runs})
    plans = [plan(run.pk, b, StepScale(Grid.over(b.lo, b.hi, points)), logging_stride(run.config))
             for run in runs if (b := bounds.get((run.pk, name)))]
    if not plans:
        return series
    for run_id, fetched in fetch_metric(name, plans, with_time=True).items():
        # In microseconds, as timedelta.total_seconds() computes it: the same float.
        origin = epoch_us(origins[run_id])
        assert origin is not None  # the run has points of `name`, each with its time
        rows = cast(list[tuple[int, float, int]], fetched.rows)  # read with_time: every row has its time
        series.points[run_id] = [((time - origin) / 10**6, value) for _, value, time in rows]
        series.downsampled |= fetched.downsampled
    return series


def time_origin(run, run_bounds: list[Bounds]) -> datetime | None:
    """When the run's clock starts: its first start, or its first metric if that came earlier
    (points imported or reported before the status change arrived)."""
    candidates = [t for t in (run.started_at, *(b.first_time for b in run_bounds)) if t is not None]
    return min(candidates, default=None)
