"""Metric series for charts: one name, a step range, at most N points, reduced in the database.

When a series has more points than asked for, steps are cut into N equal
buckets and each bucket becomes one point: its first step, the mean value,
and the min and max so a chart can still show spikes.
"""
from collections.abc import Iterable

from django.db.models import Avg, BigIntegerField, Count, F, Max, Min
from django.db.models.functions import Cast

from runs.telemetry.models import MetricPoint, RetrainedMetricPoint

DEFAULT_MAX_POINTS = 1000
MAX_POINTS_LIMIT = 20000


def metric_names(run) -> list[str]:
    return list(MetricPoint.objects.filter(run=run).values_list("name", flat=True).distinct().order_by("name"))


def series(run, name: str, step_min: int | None, step_max: int | None, max_points: int) -> dict:
    points = MetricPoint.objects.filter(run=run, name=name)
    if step_min is not None:
        points = points.filter(step__gte=step_min)
    if step_max is not None:
        points = points.filter(step__lte=step_max)
    # One query for the range and the count (this runs once per series of every chart).
    bounds = points.aggregate(lo=Min("step"), hi=Max("step"), count=Count("id"))
    if bounds["lo"] is None:
        return {"step": [], "value": [], "min": [], "max": [], "downsampled": False}
    if bounds["count"] <= max_points:
        rows = latest_per_step(points.order_by("step", "id").values_list("step", "value"))
        steps, values = _columns(rows, 2)
        return {"step": steps, "value": values, "min": values, "max": values, "downsampled": False}
    return _bucketed(points, bounds["lo"], bounds["hi"], max_points)


def earlier_attempts(run, names: list[str]) -> dict[str, dict[str, list]]:
    """Per name, the values earlier attempts reported at steps trained again since (runs/telemetry/
    metric_rows.py set_aside_retrained_points), in step order."""
    rows = (RetrainedMetricPoint.objects.filter(run=run, name__in=names).order_by("name", "step", "attempt")
            .values_list("name", "step", "value", "attempt"))
    found: dict[str, dict[str, list]] = {}
    for name, step, value, attempt in rows:
        series = found.setdefault(name, {"step": [], "value": [], "attempt": []})
        series["step"].append(step)
        series["value"].append(value)
        series["attempt"].append(attempt)
    return found


def latest_per_step(rows: Iterable[tuple[int, float]]) -> list[tuple[int, float]]:
    """(step, value) rows in (step, id) order, one per step: the last stored. A run resumed from
    an earlier checkpoint trains the steps after it again, and the later attempt's value is the
    one that led to the model (both stay stored)."""
    kept: list[tuple[int, float]] = []
    for step, value in rows:
        if kept and kept[-1][0] == step:
            kept[-1] = (step, value)
        else:
            kept.append((step, value))
    return kept


def _bucketed(points, lo: int, hi: int, max_points: int) -> dict:
    span = hi - lo + 1
    # Integer division puts each step in one of max_points buckets. The product is
    # computed in 64 bits: steps up to 10^7 times 2*10^4 points overflow PostgreSQL's integer.
    rows = (
        points.annotate(bucket=Cast(F("step") - lo, BigIntegerField()) * max_points / span)
        .values("bucket")
        .annotate(first_step=Min("step"), mean=Avg("value"), low=Min("value"), high=Max("value"))
        .order_by("bucket")
        .values_list("first_step", "mean", "low", "high")
    )
    steps, means, lows, highs = _columns(rows, 4)
    return {"step": steps, "value": means, "min": lows, "max": highs, "downsampled": True}


def _columns(rows, width: int) -> list[list]:
    columns = [list(column) for column in zip(*rows)]
    return columns or [[] for _ in range(width)]
