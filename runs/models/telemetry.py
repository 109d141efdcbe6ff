"""What runs report: metric points, sampled completions, log lines, checkpoints."""
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
# both plan it so (bench/samples.py; tests/runs/test_sample_browse_index.py checks the plan).
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


class EvalOutcome(models.Model):
    """One evaluation example's answers at one evaluation of a run: what "one example, followed"
    reads across steps (and, by `key`, across runs evaluated on the same examples)."""
    run = models.ForeignKey("runs.Run", on_delete=models.CASCADE, related_name="eval_outcomes")
    step = models.PositiveIntegerField()
    model_version = models.PositiveIntegerField(default=0)
    index = models.PositiveIntegerField(help_text="The example's place in the run's evaluation set.")
    key = models.CharField(max_length=16, help_text="A hash of the prompt: the same example in another run.")
    prompt = models.TextField()
    answers = models.JSONField(default=list)  # [{text, rewards, total_reward, passed, num_tokens, finish_reason}]
    passed = models.PositiveIntegerField(default=0, help_text="Answers that passed.")
    samples = models.PositiveIntegerField(default=1, help_text="Answers given.")
    score = models.FloatField(null=True, help_text="The answers' mean evaluation reward.")

    class Meta:
        ordering = ["step", "index"]
        constraints = [models.UniqueConstraint(fields=["run", "step", "index"], name="eval_outcome_once")]
        indexes = [models.Index(fields=["run", "key", "step"], name="eval_outcome_run_key_step")]

    @property
    def pass_rate(self) -> float:
        return self.passed / self.samples if self.samples else 0.0


class Alarm(models.Model):
    """A warning the run raised about its own signals (runs/alarms/), at the step that tripped it."""
    run = models.ForeignKey("runs.Run", on_delete=models.CASCADE, related_name="alarms")
    kind = models.CharField(max_length=40)  # a name of worker.trainer.config.ALARMS
    step = models.PositiveIntegerField()
    message = models.TextField()
    values = models.JSONField(default=dict, help_text="The numbers that tripped it.")
    stopped_run = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["step", "id"]
        indexes = [models.Index(fields=["run", "kind", "step"], name="alarm_run_kind_step")]


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


class Checkpoint(models.Model):
    run = models.ForeignKey("runs.Run", on_delete=models.CASCADE, related_name="checkpoints")
    step = models.PositiveIntegerField()
    path = models.CharField(max_length=1000)  # where the worker wrote it
    size_bytes = models.PositiveBigIntegerField(default=0)
    model_version = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField()
    # Uploaded whole to the control plane's store (runs/artifacts/checkpoint_store.py): it can be
    # downloaded, and resumed from, wherever the worker ran.
    in_store = models.BooleanField(default=False)
    # The uploaded files as the worker's manifest gave them ({path, size, sha256}, checked on
    # arrival): a worker resuming from the checkpoint checks what it fetched against them.
    # Empty for a checkpoint not uploaded, or uploaded before they were kept.
    files = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["step"]
        constraints = [models.UniqueConstraint(fields=["run", "step"], name="checkpoint_once_per_step")]


class EventCursor(models.Model):
    """The highest sequence number stored per (run, source): what makes ingest idempotent."""

    run = models.ForeignKey("runs.Run", on_delete=models.CASCADE, related_name="event_cursors")
    source = models.CharField(max_length=64)
    last_seq = models.PositiveBigIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["run", "source"], name="cursor_per_run_source")]
