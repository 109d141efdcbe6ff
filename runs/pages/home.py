"""The home page: recent runs and the one-click demo run (runs.pages.watch.demo)."""
from django.contrib.auth.decorators import login_required
from django.shortcuts import render

from runs.actions.liveness import mark_lost_runs
from runs.models import Dataset, RewardFunction, Run, TrainingConfig
from runs.pages.watch.runs_list import recent_runs

RECENT = 10


@login_required
def home(request):
    user = request.user
    mark_lost_runs(Run.objects.visible_to(user))
    return render(request, "runs/home.html", {
        "runs": recent_runs(user, RECENT),
        "counts": {
            "datasets": Dataset.objects.visible_to(user).count(),
            "rewards": RewardFunction.objects.visible_to(user).count(),
            "configs": TrainingConfig.objects.visible_to(user).count(),
        },
    })
