"""Runs whose worker stopped reporting become lost, so none stays "running" forever.

Called on read (run lists and details) and by `manage.py mark_lost_runs`,
which a cron or systemd timer can run; the worker side cannot do it, since
it never touches the database.
"""
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from runs.live.events import publish
from runs.live.messages import StatusMessage
from runs.training_runs.models import Run, RunStatus


def overdue_runs(now=None):
    now = now or timezone.now()
    cutoff = now - timedelta(seconds=settings.RUN_HEARTBEAT_TIMEOUT_S)
    silent = Q(last_heartbeat_at__lt=cutoff) | Q(last_heartbeat_at__isnull=True, queued_at__lt=cutoff)
    return Run.objects.filter(silent, status__in=[RunStatus.STARTING, RunStatus.RUNNING])


def mark_lost_runs(queryset=None) -> list[int]:
    """Marks overdue runs (within `queryset`, default all) lost; returns their ids."""
    now = timezone.now()
    candidates = overdue_runs(now)
    if queryset is not None:
        candidates = candidates.filter(pk__in=queryset.values("pk"))
    lost = []
    for run_id in candidates.values_list("pk", flat=True):
        with transaction.atomic():
            run = Run.objects.select_for_update().get(pk=run_id)
            # Re-checked under the lock: a heartbeat may have landed meanwhile.
            if run.heartbeat_overdue(now, settings.RUN_HEARTBEAT_TIMEOUT_S):
                run.mark_lost()
                run.save()
                publish(StatusMessage.of(run))
                lost.append(run.pk)
    return lost
