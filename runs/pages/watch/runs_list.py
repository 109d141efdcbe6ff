"""The runs list (/runs/): status badges, alarms, progress, last reward, filters, pick runs to compare."""
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db.models import OuterRef, Q, Subquery
from django.shortcuts import render
from django.urls import path

from runs.actions.liveness import mark_lost_runs
from runs.alarms.summary import with_alarm_summary
from runs.models import MetricPoint, Run, RunStatus
from runs.record_ids import whole_number

PAGE_SIZE = 50
REWARD_METRIC = "rollout/reward_mean"  # worker/trainer/rollout/metrics.py


def with_last_reward(runs):
    """Annotates each run with its newest mean reward (one indexed lookup per run: run, name, step)."""
    newest = MetricPoint.objects.filter(run=OuterRef("pk"), name=REWARD_METRIC).order_by("-step", "-id")
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


@login_required
def runs_list(request):
    mark_lost_runs(Run.objects.visible_to(request.user))  # "on read", like the API's list
    status = request.GET.get("status", "")
    text = request.GET.get("q", "").strip()[:200]
    page = Paginator(filtered_runs(request.user, status, text), PAGE_SIZE).get_page(request.GET.get("page"))
    return render(request, "runs/list.html", {
        "page": page, "runs": page.object_list, "status": status if status in RunStatus.values else "",
        "text": text, "statuses": RunStatus.choices, "filtered": bool(status or text),
        "has_any": page.paginator.count > 0 or Run.objects.visible_to(request.user).exists(),
    })


urlpatterns = [path("runs/", runs_list, name="page-runs")]
