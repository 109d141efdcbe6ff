"""Which metric names runs reported, without reading their points.

SELECT DISTINCT name would walk every point of the run (millions for a long run). A
recursive query hops from one name to the next through the (run, name, step) index
instead: one index seek per name. Plain SQL that SQLite and PostgreSQL both run.
"""
from django.db import connection

from runs.telemetry.models import MetricPoint

_TABLE = MetricPoint._meta.db_table
_NEXT_NAME = f"""
WITH RECURSIVE names(name) AS (
    SELECT MIN(name) FROM {_TABLE} WHERE run_id = %s
    UNION ALL
    SELECT (SELECT MIN(name) FROM {_TABLE} WHERE run_id = %s AND name > names.name)
    FROM names WHERE names.name IS NOT NULL
)
SELECT name FROM names WHERE name IS NOT NULL
"""


def run_metric_names(run_id: int) -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute(_NEXT_NAME, [run_id, run_id])
        return [row[0] for row in cursor.fetchall()]


def metric_names(run_ids: list[int]) -> list[str]:
    """The names any of the runs reported, sorted."""
    return sorted({name for run_id in run_ids for name in run_metric_names(run_id)})
