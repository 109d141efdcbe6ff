"""What runs report: metric points (and those a resumed run trained again), sampled
completions, log lines, and where each worker's stream of events stands."""
from django.db import connections, models


class MetricPoint(models.Model):
    run = models.ForeignKey("runs.Run", on_delete=models.CASCADE, related_name="metric_points")
    name = models.CharField(max_length=200)
    step = models.PositiveIntegerField()
    value = models.FloatField()
    time = models.DateTimeField()
    attempt = models.PositiveIntegerField(default=1)  # the run's attempt that reported it

    class Meta:
        # "One name, a step range" is how charts and comparisons read. On PostgreSQL the index
        # also carries value and time (ignored elsewhere), so that a comparison's picked
        # points are index-only lookups (runs/compare/fetch.py).
        indexes = [models.Index(fields=["run", "name", "step"], include=["value", "time"],
                                name="metric_run_name_step")]



class RetrainedMetricPoint(models.Model):
    """A point of an earlier attempt at a step the run trained again after a resume. Charts and
    comparisons read MetricPoint, which then holds each step once, the value of the attempt that
    led to the model; these are kept, with their attempt, for who wants to see both."""
    run = models.ForeignKey("runs.Run", on_delete=models.CASCADE, related_name="retrained_points")
    name = models.CharField(max_length=200)
    step = models.PositiveIntegerField()
    value = models.FloatField()
    time = models.DateTimeField()
    attempt = models.PositiveIntegerField()

    class Meta:
        indexes = [models.Index(fields=["run", "name", "step"], name="retrained_run_name_step")]

# The distinct steps of a run's samples as a loose index scan: each step is one seek in the
# (run, step, ...) index for the next larger step, so a run with a million samples in a thousand
# steps costs a thousand seeks, where DISTINCT reads every sample's entry. SQLite and PostgreSQL
# both plan it so (bench/samples.py; tests/runs/telemetry/test_sample_browse_index.py checks the plan).
SAMPLE_STEPS_SQL = """
WITH RECURSIVE steps(step) AS (
    SELECT MIN(step) FROM {table} WHERE run_id = %s AND step > %s
    UNION ALL
    SELECT (SELECT MIN(later.step) FROM {table} AS later WHERE later.run_id = %s AND later.step > steps.step)
    FROM steps WHERE steps.step IS NOT NULL
)
SELECT step FROM steps WHERE step IS NOT NULL
"""


class SampleQuerySet(models.QuerySet):
    def steps_of(self, run_id: int, after: int | None = None) -> list[int]:
        """The steps of the run that have samples, ascending; with `after`, only larger ones."""
        sql = SAMPLE_STEPS_SQL.format(table=self.model._meta.db_table)
        with connections[self.db].cursor() as cursor:
            cursor.execute(sql, [run_id, -1 if after is None else after, run_id])
            return [step for step, in cursor.fetchall()]


class Sample(models.Model):
    run = models.ForeignKey("runs.Run", on_delete=models.CASCADE, related_name="samples")
    step = models.PositiveIntegerField()
    group = models.PositiveIntegerField()
    prompt = models.TextField()
    completion = models.TextField()
    rewards = models.JSONField(default=dict)
    total_reward = models.FloatField(null=True)
    advantage = models.FloatField(null=True)
    model_version = models.PositiveIntegerField(default=0)
    staleness = models.PositiveIntegerField(default=0)
    num_tokens = models.PositiveIntegerField(default=0)
    finish_reason = models.CharField(max_length=40, blank=True)
    # An episode of a multi-turn rollout, message by message (worker.trainer.events.SampleTurn).
    turns = models.JSONField(null=True, blank=True)
    end_reason = models.CharField(max_length=40, blank=True)
    # Each judge's raw answer about this completion, by reward name (a rank judge's: the group's).
    judgements = models.JSONField(null=True, blank=True)

    objects = SampleQuerySet.as_manager()

    class Meta:
        ordering = ["step", "group", "id"]
        # In the order samples are read (a step's page, the run's pages, the steps' list above):
        # a page is a range of the index, never a sort, however many samples the run holds.
        indexes = [models.Index(fields=["run", "step", "group", "id"], name="sample_run_step_group")]


class LogLine(models.Model):
    class Level(models.TextChoices):
        DEBUG = "debug"
        INFO = "info"
        WARNING = "warning"
        ERROR = "error"

    run = models.ForeignKey("runs.Run", on_delete=models.CASCADE, related_name="log_lines")
    time = models.DateTimeField()
    level = models.CharField(max_length=10, choices=Level.choices, default=Level.INFO)
    source = models.CharField(max_length=40, default="trainer")
    message = models.TextField()

    class Meta:
        ordering = ["id"]


class EventCursor(models.Model):
    """The highest sequence number stored per (run, source): what makes ingest idempotent."""

    run = models.ForeignKey("runs.Run", on_delete=models.CASCADE, related_name="event_cursors")
    source = models.CharField(max_length=64)
    last_seq = models.PositiveBigIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["run", "source"], name="cursor_per_run_source")]
