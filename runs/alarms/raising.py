"""Raising alarms: each stored once, the run stopped when its config asks, the page told.

Stopping is a cancel request (Run.request_cancel): the worker hears it in the reply to this
very batch, and the trainer saves a checkpoint before it stops, so the run can be resumed or
its last model kept. Who stopped it is written to the run's log, beside the alarm's mark.
"""
from django.utils import timezone

from runs.alarms.models import Alarm
from runs.alarms.rules import Trip
from runs.alarms.settings import AlarmSettings
from runs.live.events import publish
from runs.live.messages import AlarmMessage, AlarmRow, LogMessage, StatusMessage
from runs.telemetry.models import LogLine


def raised_before(run, trips: list[Trip]) -> set[tuple[str, int]]:
    """(kind, step) of the trips already raised in this attempt (one query, along the alarms'
    index). Only fresh steps come here, so this guards rather than decides; an earlier attempt's
    alarms do not count, as a resumed run trains those steps again."""
    alarms = Alarm.objects.filter(run=run, kind__in={t.kind for t in trips}, step__in={t.step for t in trips})
    if run.queued_at is not None:
        alarms = alarms.filter(created_at__gte=run.queued_at)
    return set(alarms.values_list("kind", "step"))


def raise_alarms(run, trips: list[Trip], settings: AlarmSettings) -> list[Alarm]:
    """Stores the trips not raised before, in step order; inside the ingest's transaction, and
    published after it commits (runs.live.events)."""
    if not trips:
        return []
    known, raised = raised_before(run, trips), []
    for trip in sorted(trips, key=lambda t: t.step):
        if (trip.kind, trip.step) in known:
            continue
        stops = trip.kind in settings.stop_on and run.is_active and not run.cancel_requested
        alarm = Alarm.objects.create(run=run, kind=trip.kind, step=trip.step, message=trip.message,
                                     values=trip.values, stopped_run=stops)
        if stops:
            _stop(run, alarm)
        publish(AlarmMessage.of(run, AlarmRow.model_validate(alarm)))
        raised.append(alarm)
    return raised


def _stop(run, alarm: Alarm) -> None:
    run.request_cancel()  # the ingest saves the run
    line = LogLine.objects.create(
        run=run, time=timezone.now(), level=LogLine.Level.WARNING, source="control-plane",
        message=f"Alarm {alarm.kind} at step {alarm.step} stops the run (alarm_stop_on): {alarm.message}. "
                f"The trainer saves a checkpoint, then the run is cancelled.")
    publish(LogMessage.of(run, [line]))
    publish(StatusMessage.of(run))
