"""Writing many metric points fast: plain rows, no model instances.

Building and compiling a model instance per value was most of the ingest's
cost (about 35 µs of CPU per value); COPY on PostgreSQL and executemany
elsewhere cost a small fraction of that.
"""
from django.db import connection
from django.db.models import Field

from runs.telemetry.models import MetricPoint, RetrainedMetricPoint

COLUMNS = ("run", "name", "step", "value", "time", "attempt")


def metric_row(run_id: int, name: str, step: int, value: float, time, attempt: int) -> tuple:
    """A row for insert_metric_rows; `time` already adapted with database_time()."""
    return (run_id, name, step, value, time, attempt)


def database_time(moment):
    return connection.ops.adapt_datetimefield_value(moment)


def insert_metric_rows(rows: list[tuple]) -> None:
    if not rows:
        return
    quote, meta = connection.ops.quote_name, MetricPoint._meta
    table = quote(meta.db_table)
    columns = ", ".join(quote(_column(field)) for field in COLUMNS)
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            with cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
        else:
            placeholders = ", ".join(["%s"] * len(COLUMNS))
            cursor.executemany(f"INSERT INTO {table} ({columns}) VALUES ({placeholders})", rows)


def _column(name: str) -> str:
    field = MetricPoint._meta.get_field(name)
    assert isinstance(field, Field) and field.column is not None  # COLUMNS are the model's own columns
    return field.column


def set_aside_retrained_points(run, checkpoint_step: int) -> int:
    """Moves the run's points after `checkpoint_step`, which a resume from that checkpoint trains
    again, to RetrainedMetricPoint (with their attempt); how many. Called when the resume is
    queued, so that charts never show two values for one step."""
    later = MetricPoint.objects.filter(run=run, step__gt=checkpoint_step)
    fields = ("name", "step", "value", "time", "attempt")
    moved = RetrainedMetricPoint.objects.bulk_create(
        (RetrainedMetricPoint(run=run, **dict(zip(fields, row))) for row in later.values_list(*fields).iterator()),
        batch_size=2000)
    later.delete()
    return len(moved)
