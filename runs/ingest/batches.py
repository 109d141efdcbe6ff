"""Storing a batch of worker events: all of it once, or none of it.

The batch was already validated against worker.trainer.events; here each
event is applied in sequence order. Events at or below the source's cursor
were stored by an earlier delivery of the same batch and are skipped.
"""
from dataclasses import dataclass, field
from datetime import UTC, datetime

from django.db import transaction
from django.utils import timezone

from runs.alarms.watch import watch_signals
from runs.checkpoints.models.checkpoint import Checkpoint
from runs.evaluation.models import EvalOutcome
from runs.live.events import publish
from runs.live.messages import (
    CheckpointMessage,
    EvaluationMessage,
    EvaluationRow,
    LogMessage,
    MetricPointRow,
    MetricsMessage,
    SamplesMessage,
    StatusMessage,
)
from runs.telemetry.metric_rows import database_time, insert_metric_rows, metric_row
from runs.telemetry.models import EventCursor, LogLine, Sample
from runs.training_runs.models import Run, RunStatus
from worker.trainer.events import EventBatch, IngestReply


@dataclass
class _Pending:
    """Rows gathered from one batch, written in bulk, then published as live messages."""
    metrics: list = field(default_factory=list)
    samples: list = field(default_factory=list)
    logs: list = field(default_factory=list)
    live_metrics: list[MetricPointRow] = field(default_factory=list)
    outcomes: list = field(default_factory=list)
    evaluations: list[EvaluationRow] = field(default_factory=list)
    status_changed: bool = False


def _event_time(event) -> datetime:
    if event.time is None:
        return timezone.now()
    return datetime.fromtimestamp(event.time, tz=UTC)


def ingest_batch(run: Run, batch: EventBatch) -> IngestReply:
    with transaction.atomic():
        run = Run.objects.select_for_update().get(pk=run.pk)
        cursor, _ = EventCursor.objects.select_for_update().get_or_create(run=run, source=batch.source)
        fresh = [event for event in sorted(batch.events, key=lambda e: e.seq) if event.seq > cursor.last_seq]
        pending = _Pending()
        if fresh and run.status == RunStatus.LOST and not any(e.type == "status" for e in fresh):
            run.mark_recovered()
            pending.status_changed = True
        for event in fresh:
            _APPLY[event.type](run, event, pending)
        _write(run, pending)
        # After the points are stored: alarms read the run's recent signals (runs/alarms/).
        if pending.live_metrics:
            watch_signals(run, pending.live_metrics)
        if fresh:
            cursor.last_seq = fresh[-1].seq
            cursor.save(update_fields=["last_seq"])
        run.last_heartbeat_at = timezone.now()
        run.save()
        _publish(run, pending)
    return IngestReply(
        stored=len(fresh), duplicates=len(batch.events) - len(fresh),
        status=run.status, cancel_requested=run.cancel_requested,
    )


def _apply_status(run, event, pending):
    # IllegalTransition propagates: the whole batch is refused and rolled back.
    pending.status_changed |= run.report_status(event.status, event.message)


def _apply_metrics(run, event, pending):
    time = _event_time(event)
    stored_time = database_time(time)
    pending.metrics += [metric_row(run.pk, name, event.step, value, stored_time, run.attempt)
                        for name, value in event.values.items()]
    pending.live_metrics.append(MetricPointRow(step=event.step, time=time.timestamp(), values=event.values))
    run.current_step = max(run.current_step, event.step)


def _apply_samples(run, event, pending):
    for record in event.samples:
        pending.samples.append(Sample(run=run, step=event.step, **record.model_dump()))


def _apply_log(run, event, pending):
    pending.logs.append(LogLine(run=run, time=_event_time(event), level=event.level,
                                source=event.source, message=event.message))


def _apply_checkpoint(run, event, pending):
    checkpoint, _ = Checkpoint.objects.update_or_create(
        run=run, step=event.step,
        defaults={"path": event.path, "size_bytes": event.size_bytes,
                  "model_version": event.model_version, "created_at": _event_time(event)},
    )
    publish(CheckpointMessage.of(run, checkpoint))


def _apply_evaluation(run, event, pending):
    for example in event.examples:
        answers = [answer.model_dump() for answer in example.answers]
        totals = [a["total_reward"] for a in answers if a["total_reward"] is not None]
        pending.outcomes.append(EvalOutcome(
            run=run, step=event.step, model_version=event.model_version, index=example.index, key=example.key,
            prompt=example.prompt, answers=answers, passed=sum(a["passed"] for a in answers),
            samples=len(answers), score=sum(totals) / len(totals) if totals else None))
    pending.evaluations.append(EvaluationRow(step=event.step, model_version=event.model_version,
                                             examples=len(event.examples)))


def _apply_heartbeat(run, event, pending):
    if event.step is not None:
        run.current_step = max(run.current_step, event.step)


_APPLY = {
    "status": _apply_status, "metrics": _apply_metrics, "samples": _apply_samples,
    "log": _apply_log, "checkpoint": _apply_checkpoint, "heartbeat": _apply_heartbeat,
    "evaluation": _apply_evaluation,
}


def _write(run, pending):
    # bulk_create sets the ids on these instances, which the live messages carry.
    insert_metric_rows(pending.metrics)
    Sample.objects.bulk_create(pending.samples, batch_size=500)
    LogLine.objects.bulk_create(pending.logs, batch_size=1000)
    # A resumed run evaluates a step again: the latest answers stand.
    EvalOutcome.objects.bulk_create(pending.outcomes, batch_size=500, update_conflicts=True,
                                    unique_fields=["run", "step", "index"],
                                    update_fields=["model_version", "key", "prompt", "answers", "passed", "samples",
                                                   "score"])


def _publish(run, pending):
    if pending.status_changed:
        publish(StatusMessage.of(run))
    if pending.live_metrics:
        publish(MetricsMessage.of(run, pending.live_metrics))
    if pending.samples:
        publish(SamplesMessage.of(run, pending.samples))
    if pending.logs:
        publish(LogMessage.of(run, pending.logs))
    for row in pending.evaluations:
        publish(EvaluationMessage.of(run, row))
