"""New run (/runs/new/): pick a dataset and reward functions with weights (or an environment, which
brings both), a config (or edit a copy inline), a model and a worker pool, then start. Validated by
the API's RunSerializer; created and started in one transaction, so a refused start leaves nothing
behind."""
from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.shortcuts import redirect, render
from django.urls import path
from pydantic import ValidationError as SchemaError

from runs.accounts import authoring
from runs.configs.form_fields import default_values
from runs.configs.models import TrainingConfig
from runs.datasets.models import Dataset
from runs.environments.models.environment import Environment
from runs.fleet.choices import found_models, worker_pools
from runs.rewards.models.function import RewardFunction
from runs.training_runs.lifecycle import start_run
from runs.training_runs.models import Run
from runs.training_runs.pages.new_run_form import (
    Entered,
    PlacedErrors,
    editor_groups,
    entered_from_post,
    entered_from_run,
    place_errors,
    serializer_payload,
)
from runs.training_runs.serializers import RunSerializer
from runs.web.record_ids import whole_number


class StartRefused(Exception):
    """Starting failed after the run was saved; raised inside the transaction to undo the save."""


def create_and_start(serializer: RunSerializer, owner) -> Run:
    try:
        with transaction.atomic():
            return start_run(serializer.save(owner=owner))
    except SchemaError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()[:5])
        raise StartRefused(f"the run could not be launched ({problems}); nothing was saved") from None
    except authoring.NotPermitted as exc:
        raise StartRefused(f"{exc}; nothing was saved") from None


def _library(user) -> dict:
    return {
        "datasets": list(Dataset.objects.visible_to(user).order_by("name")),
        "environments": list(Environment.objects.visible_to(user).select_related("dataset").order_by("name")),
        "rewards": list(RewardFunction.objects.visible_to(user).order_by("name")),
        "configs": list(TrainingConfig.objects.visible_to(user).order_by("name")),
    }


def _reward_rows(rewards, entered: Entered, errors: PlacedErrors | None) -> list[dict]:
    return [{"reward": reward, "checked": str(reward.pk) in entered.weights,
             "weight": entered.weights.get(str(reward.pk), "1"),
             "errors": (errors.weights.get(str(reward.pk), []) if errors else [])} for reward in rewards]


def _template_values(configs, entered: Entered) -> dict | None:
    chosen = next((c for c in configs if str(c.pk) == entered.config_template), None)
    return chosen.values if chosen else None


def _render(request, entered: Entered, errors: PlacedErrors | None = None, status: int = 200):
    library = _library(request.user)
    return render(request, "runs/new.html", {
        **library, "entered": entered, "errors": errors or PlacedErrors(),
        "reward_rows": _reward_rows(library["rewards"], entered, errors),
        "eval_reward_rows": [{"reward": reward, "checked": str(reward.pk) in entered.eval_weights,
                              "weight": entered.eval_weights.get(str(reward.pk), "1")}
                             for reward in library["rewards"]],
        "groups": editor_groups(entered, _template_values(library["configs"], entered), errors),
        "models": found_models(), "pools": worker_pools(request.user),
        "config_values": {"": default_values(), **{str(c.pk): c.values for c in library["configs"]}},
        "ready": bool(library["datasets"] and library["rewards"]) or bool(library["environments"]),
    }, status=status)


def _initial(request) -> Entered:
    source = whole_number(request.GET.get("from", ""))
    if source is not None:
        return entered_from_run(Run.objects.visible_or_404(request.user, source))
    entered = Entered()
    for key in ("environment", "dataset", "config_template"):  # ?dataset=3 from a dataset's page, for example
        if whole_number(request.GET.get(key, "")) is not None:
            setattr(entered, key, request.GET[key])
    return entered


@login_required
def new_run(request):
    if request.method != "POST":
        return _render(request, _initial(request))
    entered = entered_from_post(request.POST)
    serializer = RunSerializer(data=serializer_payload(entered), context={"request": request})
    if not serializer.is_valid():
        return _render(request, entered, place_errors(serializer.errors, entered), status=400)
    try:
        run = create_and_start(serializer, request.user)
    except StartRefused as exc:
        return _render(request, entered, PlacedErrors(general=[str(exc)]), status=400)
    return redirect("page-run", pk=run.pk)


urlpatterns = [path("runs/new/", new_run, name="page-run-new")]
