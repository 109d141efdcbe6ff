"""The runs list (/runs/): status badges, alarms, progress, last reward, filters, pick runs to compare."""
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.shortcuts import render
from django.urls import path

from runs.telemetry.liveness import mark_lost_runs
from runs.training_runs.models import Run, RunStatus
from runs.training_runs.pages.listed_runs import filtered_runs

PAGE_SIZE = 50


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
