"""Reward function pages: list, create and edit built-ins (a form from the catalog), Python code (a
CodeMirror editor), judges and reward models (forms from their schemas; a judge's API key is
write-only), delete, and the dry run panel (which calls the API's dry-run, and follows a judge's
or a reward model's as the consumer scores it)."""
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import JsonResponse
from django.shortcuts import redirect, render
from django.urls import path, reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from runs.accounts import authoring
from runs.datasets.models import Dataset
from runs.rewards.dry_run_serializers import MAX_COMPLETIONS_PER_ROW, MAX_ROWS
from runs.rewards.forms import (
    STARTER_SOURCE,
    builtin_choices,
    error_lines,
    model_param_errors,
    model_param_fields,
    model_params_from_form,
    param_errors,
    params_from_form,
)
from runs.rewards.model_rewards import SCHEMAS
from runs.rewards.models.function import RewardFunction
from runs.rewards.rows import RowsUnavailable, dataset_rows, json_safe
from runs.rewards.serializers import RewardFunctionSerializer
from runs.training_runs.models import Run
from runs.web.deletion import delete_unless_used
from worker.trainer.for_control_plane.rewards import BUILTINS, SIGNATURE


def _visible(request):
    return RewardFunction.objects.visible_to(request.user)


@login_required
def reward_list(request):
    return render(request, "library/rewards/list.html", {
        "rewards": _visible(request).select_related("owner"),
        "can_author": authoring.can_author_code(request.user), "refusal": authoring.REFUSAL,
    })


def _save(request, instance, data):
    """Saves through the API's serializer; returns (reward or None, errors)."""
    serializer = RewardFunctionSerializer(instance, data=data, partial=instance is not None,
                                          context={"request": request})
    if serializer.is_valid():
        return serializer.save(**({} if instance else {"owner": request.user})), {}
    return None, serializer.errors


def _saved(request, reward, created: bool):
    messages.success(request, f"Reward {reward.name!r} {'created' if created else 'saved'}.")
    return redirect("reward-edit", pk=reward.pk)


# --- built-ins -------------------------------------------------------------------------------
def _builtin_page(request, reward, values: dict, errors: dict, status: int = 200):
    params_by_field, params_other = param_errors(errors.get("params", []))
    params_by_field.update(errors.get("param_inputs", {}))
    selected = values.get("builtin") or next(iter(BUILTINS))
    return render(request, "library/rewards/builtin_form.html", {
        "reward": reward, "values": values, "errors": errors, "params_other": params_other,
        "builtins": builtin_choices(selected, values.get("params") or {}, params_by_field),
        **_dry_run_context(request, reward),
    }, status=status)


def _builtin_submission(request) -> tuple[dict, dict]:
    builtin = request.POST.get("builtin", "")
    data = {"name": request.POST.get("name", "").strip(), "description": request.POST.get("description", ""),
            "kind": "builtin", "builtin": builtin}
    if builtin not in BUILTINS:
        return data, {}
    data["params"], input_errors = params_from_form(builtin, request.POST)
    return data, input_errors


@login_required
@require_http_methods(["GET", "POST"])
def reward_new_builtin(request):
    if request.method == "GET":
        return _builtin_page(request, None, {"builtin": request.GET.get("builtin", "")}, {})
    data, input_errors = _builtin_submission(request)
    reward, errors = (None, {}) if input_errors else _save(request, None, data)
    if reward:
        return _saved(request, reward, created=True)
    return _builtin_page(request, None, data, {**errors, "param_inputs": input_errors}, status=400)


# --- code ------------------------------------------------------------------------------------
def _code_page(request, reward, values: dict, errors: dict, status: int = 200):
    source_errors = [str(e) for e in errors.get("source", [])]
    return render(request, "library/rewards/code_form.html", {
        "reward": reward, "values": values, "errors": errors, "source_errors": source_errors,
        "editor": {"errorLines": error_lines(source_errors),
                   "readOnly": not authoring.can_author_code(request.user)},
        "can_author": authoring.can_author_code(request.user), "refusal": authoring.REFUSAL,
        "signature": SIGNATURE, **_dry_run_context(request, reward),
    }, status=status)


def _code_submission(request) -> dict:
    return {"name": request.POST.get("name", "").strip(), "description": request.POST.get("description", ""),
            "kind": "code", "source": request.POST.get("source", "").replace("\r\n", "\n")}


def _refused(request, reward, values):
    return _code_page(request, reward, values, {"non_field_errors": [authoring.REFUSAL]}, status=403)


@login_required
@require_http_methods(["GET", "POST"])
def reward_new_code(request):
    if request.method == "GET":
        return _code_page(request, None, {"source": STARTER_SOURCE}, {})
    data = _code_submission(request)
    if not authoring.can_author_code(request.user):
        return _refused(request, None, data)
    reward, errors = _save(request, None, data)
    return _saved(request, reward, created=True) if reward else _code_page(request, None, data, errors, status=400)


# --- judges and reward models --------------------------------------------------------------------
def _model_page(request, reward, kind: str, values: dict, errors: dict, status: int = 200):
    by_field, other = model_param_errors(errors.get("params", []), kind)
    for where, problems in errors.get("param_inputs", {}).items():
        by_field.setdefault(where, []).extend(problems)
    return render(request, "library/rewards/model_form.html", {
        "reward": reward, "kind": kind, "kind_label": RewardFunction.Kind(kind).label, "values": values,
        "errors": errors, "params_other": other,
        "fields": model_param_fields(SCHEMAS[kind], values.get("params") or {}, by_field),
        # The key itself is never rendered back, not even after a refused form: it is typed again.
        "api_key_set": bool(reward and reward.api_key_sealed), "api_key_typed": bool(values.get("api_key")),
        **_dry_run_context(request, reward),
    }, status=status)


def _model_submission(request, kind: str) -> tuple[dict, dict]:
    data = {"name": request.POST.get("name", "").strip(), "description": request.POST.get("description", ""),
            "kind": kind}
    data["params"], input_errors = model_params_from_form(kind, request.POST)
    if kind == RewardFunction.Kind.JUDGE:
        typed = request.POST.get("api_key", "").strip()
        if typed:
            data["api_key"] = typed  # replaces the stored key
        elif request.POST.get("api_key_clear") == "on":
            data["api_key"] = ""  # clears it; left out, the stored key is kept
    return data, input_errors


def _model_post(request, reward, kind: str):
    data, input_errors = _model_submission(request, kind)
    saved, errors = (None, {}) if input_errors else _save(request, reward, data)
    if saved:
        return _saved(request, saved, created=reward is None)
    return _model_page(request, reward, kind, data, {**errors, "param_inputs": input_errors}, status=400)


def _model_new(kind: str):
    @login_required
    @require_http_methods(["GET", "POST"])
    def new(request):
        if request.method == "GET":
            return _model_page(request, None, kind, {}, {})
        return _model_post(request, None, kind)
    new.__name__ = f"reward_new_{kind}"
    return new


reward_new_judge = _model_new(RewardFunction.Kind.JUDGE)
reward_new_reward_model = _model_new(RewardFunction.Kind.REWARD_MODEL)


# --- one reward ----------------------------------------------------------------------------
@login_required
@require_http_methods(["GET", "POST"])
def reward_edit(request, pk: int):
    reward = RewardFunction.objects.visible_or_404(request.user, pk)
    stored = {"name": reward.name, "description": reward.description, "builtin": reward.builtin,
              "params": reward.params, "source": reward.source}
    if reward.kind in SCHEMAS:
        if request.method == "GET":
            return _model_page(request, reward, reward.kind, stored, {})
        return _model_post(request, reward, reward.kind)
    if reward.kind == RewardFunction.Kind.CODE:
        if request.method == "GET":
            return _code_page(request, reward, stored, {})
        data = _code_submission(request)
        if not authoring.can_author_code(request.user):
            return _refused(request, reward, data)
        saved, errors = _save(request, reward, data)
        return _saved(request, saved, created=False) if saved else _code_page(request, reward, data, errors, 400)
    if request.method == "GET":
        return _builtin_page(request, reward, stored, {})
    data, input_errors = _builtin_submission(request)
    saved, errors = (None, {}) if input_errors else _save(request, reward, data)
    if saved:
        return _saved(request, saved, created=False)
    return _builtin_page(request, reward, data, {**errors, "param_inputs": input_errors}, status=400)


@login_required
@require_POST
def reward_delete(request, pk: int):
    reward = RewardFunction.objects.visible_or_404(request.user, pk)
    return delete_unless_used(request, reward, "Reward", "reward-edit", "reward-list")


# --- the dry run panel ----------------------------------------------------------------------
def _dry_run_context(request, reward) -> dict:
    if reward is None:
        return {"dry_run": None}
    datasets = Dataset.objects.visible_to(request.user).order_by("name")
    runs = Run.objects.visible_to(request.user).filter(samples__isnull=False).distinct().order_by("-created_at")[:50]
    steps = {run.pk: sorted(set(run.samples.values_list("step", flat=True))) for run in runs}
    return {"dry_run": {
        "url": reverse("rewardfunction-dry-run", args=[reward.pk]), "rowsUrl": reverse("reward-rows"),
        "maxRows": MAX_ROWS, "maxCompletions": MAX_COMPLETIONS_PER_ROW,
        "datasets": [{"id": d.pk, "name": d.name} for d in datasets],
        "runs": [{"id": run.pk, "name": run.name, "steps": steps[run.pk]} for run in runs],
        "sourceApi": reverse("rewardfunction-detail", args=[reward.pk]) if reward.kind == "code" else None,
        "kind": reward.kind,
    }}


@login_required
@require_GET
def reward_rows(request):
    """The first rows of a dataset, for typing completions against (JSON)."""
    try:
        count = min(max(int(request.GET.get("rows", "3")), 1), MAX_ROWS)
        dataset = Dataset.objects.visible_to(request.user).filter(pk=int(request.GET.get("dataset", ""))).first()
    except ValueError:
        return JsonResponse({"dataset": "give a dataset id and a number of rows"}, status=400)
    if dataset is None:
        return JsonResponse({"dataset": "no such dataset"}, status=404)
    try:
        rows = dataset_rows(dataset, count)
    except RowsUnavailable as exc:
        return JsonResponse({exc.field: str(exc)}, status=400)
    return JsonResponse({"rows": [{"index": r.index, "prompt": r.prompt, "columns": json_safe(r.columns)}
                                  for r in rows]})


urlpatterns = [
    path("rewards/", reward_list, name="reward-list"),
    path("rewards/new/builtin/", reward_new_builtin, name="reward-new-builtin"),
    path("rewards/new/code/", reward_new_code, name="reward-new-code"),
    path("rewards/new/judge/", reward_new_judge, name="reward-new-judge"),
    path("rewards/new/reward-model/", reward_new_reward_model, name="reward-new-reward-model"),
    path("rewards/rows/", reward_rows, name="reward-rows"),
    path("rewards/<int:pk>/", reward_edit, name="reward-edit"),
    path("rewards/<int:pk>/delete/", reward_delete, name="reward-delete"),
]
