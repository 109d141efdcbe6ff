"""The home page: a card for each one-click demo (runs.training_runs.pages.demo) and the recent runs."""
from dataclasses import dataclass

from django.contrib.auth.decorators import login_required
from django.shortcuts import render

from runs.configs.models import TrainingConfig
from runs.datasets.models import Dataset
from runs.demos.definitions import DEMOS
from runs.rewards.models.function import RewardFunction
from runs.telemetry.liveness import mark_lost_runs
from runs.training_runs.models import Run
from runs.training_runs.pages.listed_runs import recent_runs

RECENT = 10
# One line on what each demo is, beside its title and what to watch (both from its definition).
WHAT_IT_IS = {
    "arithmetic": "SmolLM2-135M on sums of two numbers up to 30, each after one worked example, "
                  "rewarded for the right answer written as #### <number>.",
    "tool-use": "The same model on harder sums (four numbers up to 1,000, with products), with a calculator "
                "it may call in the episode before it answers; rewarded for the right answer.",
}


@dataclass(frozen=True)
class DemoCard:
    key: str
    title: str
    what: str
    watch: str


def demo_cards() -> list[DemoCard]:
    return [DemoCard(key=key, title=demo.title, what=WHAT_IT_IS[key], watch=demo.watch)
            for key, demo in DEMOS.items()]


@login_required
def home(request):
    user = request.user
    mark_lost_runs(Run.objects.visible_to(user))
    return render(request, "runs/home.html", {
        "demos": demo_cards(),
        "runs": recent_runs(user, RECENT),
        "counts": {
            "datasets": Dataset.objects.visible_to(user).count(),
            "rewards": RewardFunction.objects.visible_to(user).count(),
            "configs": TrainingConfig.objects.visible_to(user).count(),
        },
    })
