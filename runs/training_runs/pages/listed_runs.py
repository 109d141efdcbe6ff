"""The runs a person sees listed, with what the lists show of each: the runs list and the home page."""
from django.db.models import OuterRef, Q, Subquery

from runs.alarms.summary import with_alarm_summary
from runs.telemetry.models import MetricPoint
from runs.training_runs.models import Run, RunStatus
from runs.web.record_ids import whole_number
from worker.trainer.metric_names import ROLLOUT_REWARD_MEAN


def with_last_reward(runs):
    """Annotates each run with its newest mean reward (one indexed lookup per run: run, name, step)."""
    newest = MetricPoint.objects.filter(run=OuterRef("pk"), name=ROLLOUT_REWARD_MEAN).order_by("-step", "-id")
    return runs.annotate(last_reward=Subquery(newest.values("value")[:1]))


def filtered_runs(user, status: str = "", text: str = ""):
    """The user's runs (everyone's for staff), newest first, narrowed by status and a text search;
    each with its last reward and its alarms (runs.alarms.summary)."""
    runs = Run.objects.visible_to(user).select_related("dataset", "owner")
    if status in RunStatus.values:
        runs = runs.filter(status=status)
    if text:
        match = Q(name__icontains=text) | Q(dataset__name__icontains=text) | Q(config__model__icontains=text)
        if (run_id := whole_number(text)) is not None:
            match |= Q(pk=run_id)
        if user.is_staff:
            match |= Q(owner__username__icontains=text)
        runs = runs.filter(match)
    return with_alarm_summary(with_last_reward(runs))


def recent_runs(user, limit: int = 10):
    return list(filtered_runs(user)[:limit])
