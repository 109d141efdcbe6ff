"""Shared by the runs-area page tests (test_runs_*, test_run_page*, test_home*): a logged-in
Django client, a broker stand-in that records what would be sent to workers, and helpers
that store telemetry the way the ingest does."""
from datetime import datetime, timezone
from unittest import mock

import pytest

from runs.models import Checkpoint, LogLine, MetricPoint, Sample

NOW = datetime(2026, 1, 1, tzinfo=timezone.utc)


@pytest.fixture
def logged_in(client, owner):
    client.force_login(owner)
    return client


@pytest.fixture
def broker():
    """Records the messages a start sends to the worker pools instead of sending them."""
    with mock.patch("controlplane.celery.app.send_task") as send:
        yield send


def add_metrics(run, step: int, **values) -> None:
    MetricPoint.objects.bulk_create([MetricPoint(run=run, name=name.replace("__", "/"), step=step, value=value, time=NOW)
                                     for name, value in values.items()])


def add_sample(run, step: int, group: int = 0, completion: str = "#### 4", **fields) -> Sample:
    defaults = {"prompt": "What is 2 + 2?", "rewards": {"acc": 1.0}, "total_reward": 1.0, "advantage": 0.5,
                "model_version": step, "staleness": 0, "num_tokens": 3, "finish_reason": "stop"}
    return Sample.objects.create(run=run, step=step, group=group, completion=completion, **{**defaults, **fields})


def add_log(run, message: str, level: str = "info") -> LogLine:
    return LogLine.objects.create(run=run, time=NOW, level=level, source="trainer", message=message)


def add_checkpoint(run, step: int, path: str) -> Checkpoint:
    return Checkpoint.objects.create(run=run, step=step, path=path, size_bytes=10, model_version=step, created_at=NOW)
