"""Reading runs' metric points from the database, already reduced to one point per bucket.

A small series is reduced as runs/telemetry/metrics_query.py does it (the database's bucket means, which
read every point); a long one gives one logged point per bucket instead, fetched by index lookups
on (run, name, step), so its cost follows the points drawn. One query per metric for all runs,
rows read straight from the cursor; on PostgreSQL the picked steps are an array joined to the
points (index-only probes), and the database computes the times.
Details: docs/capabilities/compare.md#how-a-long-series-is-read; figures: bench/README.md (compare).
"""
from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from operator import itemgetter
from typing import Any

from django.db import connection
from django.db.models import Avg, BigIntegerField, Case, F, Field, Min, OuterRef, Subquery, When
from django.db.models.functions import Cast

from runs.compare.grid import StepScale
from runs.telemetry.models import MetricPoint
from runs.training_runs.models import Run

# A series of up to this many points per bucket it covers is averaged in the database;
# a longer one is picked point by point (see the module docstring).
MEANS_ROWS_PER_BUCKET = 4
# Picked steps go into the statement as literals; batches keep it far below SQLite's
# 1 MB statement limit (at 5,000 points a run, 8 runs make 40,000 steps).
MAX_PICKS_PER_QUERY = 20_000
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
MICROSECOND = timedelta(microseconds=1)


@dataclass(frozen=True)
class Bounds:
    lo: int
    hi: int
    last_value: float
    first_time: datetime | None


@dataclass(frozen=True)
class Plan:
    """How one run's points of one metric are read: bucket means, or the listed steps."""
    run_id: int
    scale: StepScale
    covered: int                  # buckets of the grid the run's steps reach
    downsampled: bool             # some buckets stand for more than one point
    picks: dict[int, int] | None = None  # {step: bucket}

    @property
    def picked(self) -> dict[int, int]:
        """`picks` of a plan that lists steps (the only plans the picked-points queries read)."""
        assert self.picks is not None
        return self.picks


@dataclass
class RunPoints:
    """One run's points of one metric: (bucket, value, time or None), by bucket; times in
    microseconds since the epoch (see `epoch_us`)."""
    rows: list[tuple[int, float, int | None]]
    downsampled: bool


def step_bounds(run_ids: list[int], names: list[str]) -> dict[tuple[int, str], Bounds]:
    """First and last step, last value and first time of each (run, metric): index seeks, no scan."""
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
                                                 as_datetime(row[f"first_time{index}"]))
    return bounds


def plan(run_id: int, bounds: Bounds, scale: StepScale, stride: int) -> Plan:
    """Averages when the series is at most a few points per bucket, picks steps otherwise."""
    covered = scale.bucket_of_step(bounds.hi) - scale.bucket_of_step(bounds.lo) + 1
    expected_rows = (bounds.hi - bounds.lo) // stride + 1
    if expected_rows <= MEANS_ROWS_PER_BUCKET * covered:
        return Plan(run_id, scale, covered, downsampled=expected_rows > covered)
    return Plan(run_id, scale, covered, downsampled=True, picks=scale.picks(bounds.lo, bounds.hi, stride))


def fetch_metric(name: str, plans: list[Plan], with_time: bool) -> dict[int, RunPoints]:
    """Every planned run's points of `name`, keyed by run id."""
    averaged = [p for p in plans if p.picks is None]
    picked = [p for p in plans if p.picks is not None]
    fetched = _bucket_means(name, averaged, with_time) if averaged else {}
    if picked:
        fetched.update(_picked_points(name, picked, with_time))
        # Steps not logged where the stride said (a resumed or irregular run): average instead.
        missed = [replace(p, picks=None) for p in picked if len(fetched[p.run_id].rows) * 2 < p.covered]
        if missed:
            fetched.update(_bucket_means(name, missed, with_time))
    return fetched


def _bucket_expression(scale: StepScale):
    grid = scale.grid
    # 64-bit arithmetic: steps up to 10^7 times samples per step times buckets overflow 32 bits.
    x = Cast(F("step"), BigIntegerField()) * scale.per_step
    return (x - grid.lo) * grid.buckets / grid.span


def _bucket_means(name: str, plans: list[Plan], with_time: bool) -> dict[int, RunPoints]:
    bucket = Case(*(When(run_id=p.run_id, then=_bucket_expression(p.scale)) for p in plans),
                  output_field=BigIntegerField())
    aggregates = {"mean": Avg("value"), **({"first_time": Min("time")} if with_time else {})}
    query = (MetricPoint.objects.filter(name=name, run_id__in=[p.run_id for p in plans])
             .annotate(bucket=bucket).values("run_id", "bucket").annotate(**aggregates).order_by())
    fetched = {p.run_id: RunPoints([], p.downsampled) for p in plans}
    for row in _raw_rows(query, ["run_id", "bucket", "mean", "first_time"][:3 + with_time]):
        fetched[row[0]].rows.append((row[1], row[2], epoch_us(as_datetime(row[3])) if with_time else None))
    for points in fetched.values():
        points.rows.sort(key=lambda row: row[0])
    return fetched


def _picked_points(name: str, plans: list[Plan], with_time: bool) -> dict[int, RunPoints]:
    totals: dict[int, dict[int, list[Any]]] = {p.run_id: {} for p in plans}  # run -> bucket -> [sum, count, first time]
    for batch in _batches(plans):
        picks = {p.run_id: p.picked for p in batch}
        for run_id, step, value, *time in _picked_rows(name, batch, with_time):
            _accumulate(totals[run_id], picks[run_id][step], value, _as_epoch_us(time[0]) if time else None)
    # A step logged twice (a run resumed from an earlier checkpoint) counts once, averaged.
    return {run_id: RunPoints([(bucket, total / count, first) for bucket, (total, count, first)
                               in sorted(buckets.items())], downsampled=True)
            for run_id, buckets in totals.items()}


def _accumulate(buckets: dict, bucket: int, value: float, time) -> None:
    seen = buckets.get(bucket)
    if seen is None:
        buckets[bucket] = [value, 1, time]
        return
    seen[0] += value
    seen[1] += 1
    if time is not None and (seen[2] is None or time < seen[2]):
        seen[2] = time


def _picked_rows(name: str, plans: list[Plan], with_time: bool) -> list[tuple]:
    """One statement for the batch: per run, its picked steps by index lookups on (run, name, step).
    Rows are (run, step, value[, time]); the time is epoch microseconds on PostgreSQL."""
    if connection.vendor == "postgresql":
        return _picked_rows_postgresql(name, plans, with_time)
    return _picked_rows_listed(name, plans, with_time)


def _picked_rows_postgresql(name: str, plans: list[Plan], with_time: bool) -> list[tuple]:
    table, column = _columns()
    selected = [f"m.{column['run']}", f"m.{column['step']}", f"m.{column['value']}"]
    if with_time:
        selected.append(f"(EXTRACT(EPOCH FROM m.{column['time']}) * 1000000)::bigint")
    sql = (f"SELECT {', '.join(selected)} FROM unnest(%s::bigint[], %s::bigint[]) AS picked(run_id, step) "
           f"JOIN {table} m ON m.{column['run']} = picked.run_id AND m.{column['name']} = %s "
           f"AND m.{column['step']} = picked.step")
    # Array literals written here: psycopg quotes a list of 4,000 numbers in Python, slower than the query.
    run_ids = _array_literal(",".join([str(int(p.run_id))] * len(p.picked)) for p in plans)
    steps = _array_literal(",".join(map(str, map(int, p.picked))) for p in plans)
    with connection.cursor() as cursor:
        cursor.execute(sql, [run_ids, steps, name])
        return cursor.fetchall()


def _array_literal(numbers) -> str:
    return "{" + ",".join(numbers) + "}"


def _picked_rows_listed(name: str, plans: list[Plan], with_time: bool) -> list[tuple]:
    """The steps are integers this module computed, written into the SQL as literals: 8 runs of
    500 steps as bound parameters cost more to prepare than the lookups themselves (SQLite)."""
    table, column = _columns()
    selected = [column["run"], column["step"], column["value"]] + ([column["time"]] if with_time else [])
    terms = [f"({column['run']} = {int(p.run_id)} AND {column['name']} = %s AND "
             f"{column['step']} IN ({','.join(str(int(step)) for step in p.picked)}))" for p in plans]
    sql = f"SELECT {', '.join(selected)} FROM {table} WHERE {' OR '.join(terms)}"
    with connection.cursor() as cursor:
        cursor.execute(sql, [name] * len(plans))
        return cursor.fetchall()


def _columns() -> tuple[str, dict[str, str]]:
    quote, meta = connection.ops.quote_name, MetricPoint._meta
    return quote(meta.db_table), {field: quote(_column_of(field)) for field in ("run", "name", "step", "value", "time")}


def _column_of(name: str) -> str:
    field = MetricPoint._meta.get_field(name)
    assert isinstance(field, Field) and field.column is not None  # a concrete field, stored in its column
    return field.column


def _batches(plans: list[Plan]) -> Iterator[list[Plan]]:
    batch: list[Plan] = []
    size = 0
    for one in plans:
        if batch and size + len(one.picked) > MAX_PICKS_PER_QUERY:
            yield batch
            batch, size = [], 0
        batch.append(one)
        size += len(one.picked)
    if batch:
        yield batch


def _raw_rows(queryset, wanted: list[str]) -> list[tuple]:
    """The queryset's rows as plain tuples, columns in `wanted` order."""
    sql, params = queryset.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        names = [column[0] for column in cursor.description]
        rows = cursor.fetchall()
    if names == wanted:
        return rows
    reorder = itemgetter(*(names.index(name) for name in wanted))
    return [reorder(row) for row in rows]


def epoch_us(moment: datetime | None) -> int | None:
    """Whole microseconds since the epoch: exact, so differences of them equal the timedeltas'."""
    return None if moment is None else (moment - EPOCH) // MICROSECOND


def _as_epoch_us(value) -> int | None:
    return value if isinstance(value, int) else epoch_us(as_datetime(value))


def as_datetime(value) -> datetime | None:
    """Raw SQLite rows carry times in UTC without a zone (as text once aggregated);
    PostgreSQL's are aware datetimes already."""
    if value is None:
        return None
    parsed = value if isinstance(value, datetime) else datetime.fromisoformat(value)
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
