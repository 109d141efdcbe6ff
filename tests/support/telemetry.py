"""Storing a run's telemetry (metric points, samples, log lines, checkpoints) straight into the
database, the way the ingest would, for tests of what reads it."""
import datetime

from django.utils import timezone

from runs.checkpoints.models.checkpoint import Checkpoint
from runs.telemetry.models import LogLine, MetricPoint, Sample

NOW = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
T0 = datetime.datetime(2025, 1, 1, tzinfo=datetime.UTC)


def add_metrics(run, step: int, **values) -> None:
    MetricPoint.objects.bulk_create([MetricPoint(run=run, name=name.replace("__", "/"), step=step, value=value,
                                                 time=NOW)
                                     for name, value in values.items()])


def add_sample(run, step: int, group: int = 0, completion: str = "#### 4", **fields) -> Sample:
    defaults = {"prompt": "What is 2 + 2?", "rewards": {"acc": 1.0}, "total_reward": 1.0, "advantage": 0.5,
                "model_version": step, "staleness": 0, "num_tokens": 3, "finish_reason": "stop"}
    return Sample.objects.create(run=run, step=step, group=group, completion=completion, **{**defaults, **fields})


def add_steps(run, values: dict[str, float], steps, attempt: int = 1) -> None:
    """The same metric values at each of `steps`, stored at once (the time: now)."""
    now = timezone.now()
    MetricPoint.objects.bulk_create([MetricPoint(run=run, name=name, step=step, value=value, time=now, attempt=attempt)
                                     for step in steps for name, value in values.items()])


def add_log(run, message: str, level: str = "info") -> LogLine:
    return LogLine.objects.create(run=run, time=NOW, level=level, source="trainer", message=message)


def add_checkpoint(run, step: int, path: str) -> Checkpoint:
    return Checkpoint.objects.create(run=run, step=step, path=path, size_bytes=10, model_version=step, created_at=NOW)


def add_points(run, name, steps, value=float, seconds_per_step=10.0):
    MetricPoint.objects.bulk_create(
        [MetricPoint(run=run, name=name, step=s, value=value(s),
                     time=T0 + datetime.timedelta(seconds=s * seconds_per_step)) for s in steps],
        batch_size=5000)
