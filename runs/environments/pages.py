"""Environment pages: the list (with the built-in environments made in one click), a form per kind
(built-in parameters, Python code in the reward editor, a verifiers id), delete, and the dry run
panel, which plays one episode through the API's dry-run."""
import json

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import path, reverse
from django.views.decorators.http import require_http_methods, require_POST

from runs.accounts import authoring
from runs.datasets.models import Dataset
from runs.dry_runs.model_play import model_play_problem
from runs.environments import forms as forms
from runs.environments.dry_run import MAX_TURNS
from runs.demos.environment_library import builtin_environments
from runs.environments.models.environment import Environment
from runs.environments.serializers import EnvironmentSerializer
from runs.fleet.choices import found_models
from runs.rewards.forms import error_lines, param_errors
from runs.rewards.models.function import RewardFunction
from runs.web.deletion import delete_unless_used
from worker.trainer.for_control_plane.environments import BUILTIN_ENVIRONMENTS, SIGNATURE, installed, verifiers_problem

KINDS = {"builtin": "Built-in", "code": "Python code", "verifiers": "verifiers"}
REFUSAL = authoring.ENVIRONMENT_REFUSAL


@login_required
def environment_list(request):
    return render(request, "library/environments/list.html", {
        "environments": Environment.objects.visible_to(request.user).select_related("owner", "dataset")
                                           .prefetch_related("environment_rewards__reward_function"),
        "can_author": authoring.can_author_code(request.user), "refusal": REFUSAL,
    })


@login_required
@require_POST
def environment_builtins(request):
    made = builtin_environments(request.user)
    names = ", ".join(repr(environment.name) for environment in made)
    messages.success(request, f"Built-in environments ready: {names}.")
    return redirect("environment-list")


def _save(request, instance, data):
    """Saves through the API's serializer; returns (environment or None, errors)."""
    serializer = EnvironmentSerializer(instance, data=data, partial=instance is not None,
                                       context={"request": request})
    if serializer.is_valid():
        return serializer.save(**({} if instance else {"owner": request.user})), {}
    return None, serializer.errors


def _submission(request, kind: str) -> tuple[dict, dict]:
    """What was posted, and input errors found before the serializer (a number or JSON not read)."""
    if kind == "builtin":
        return forms.builtin_submission(request.POST)
    if kind == "verifiers":
        return forms.verifiers_submission(request.POST)
    return forms.code_submission(request.POST), {}


def _stored(environment: Environment) -> dict:
    return {"name": environment.name, "description": environment.description, "builtin": environment.builtin,
            "params": environment.params, "source": environment.source, "verifiers_id": environment.verifiers_id,
            "dataset": environment.dataset_id,
            "rubric": [{"reward_function": er.reward_function_id, "weight": f"{er.weight:g}"}
                       for er in environment.environment_rewards.all()]}


def _page(request, environment, kind: str, values: dict, errors: dict, status: int = 200):
    can_author = authoring.can_author_code(request.user)
    params_by_field, params_other = param_errors([str(e) for e in errors.get("params", [])])
    params_by_field.update(errors.get("param_inputs", {}))
    source_errors = [str(e) for e in errors.get("source", [])]
    refusal = _refusal(request.user, environment, kind)
    read_only = refusal is not None
    return render(request, "library/environments/form.html", {
        "environment": environment, "kind": kind, "kind_label": KINDS[kind], "values": values, "errors": errors,
        "datasets": Dataset.objects.visible_to(request.user).order_by("name"),
        "rubric_rows": forms.rubric_rows(RewardFunction.objects.visible_to(request.user).order_by("name"),
                                         values.get("rubric") or []),
        "rubric_errors": forms.texts(errors.get("rubric", [])),
        "builtins": forms.builtin_fields(values.get("builtin") or next(iter(BUILTIN_ENVIRONMENTS)),
                                         values.get("params") or {}, params_by_field) if kind == "builtin" else [],
        "params_other": params_other,
        "params_json": values.get("params_json") or json.dumps(values.get("params") or {}, indent=2),
        "verifiers_note": _verifiers_note(values.get("verifiers_id") or "") if kind == "verifiers" else "",
        "verifiers_permission_note": _verifiers_permission_note(can_author) if kind == "verifiers" else "",
        "source_errors": source_errors, "signature": SIGNATURE,
        "editor": {"errorLines": error_lines(source_errors), "readOnly": read_only, "label": "Environment code",
                   "textarea": "env-source", "saveButton": "env-save"},
        "can_author": can_author, "refusal": refusal or REFUSAL, "read_only": read_only,
        **_dry_run_context(request, environment),
    }, status=status)


def _refusal(user, environment, kind: str) -> str | None:
    """Why this user may not save this form at all (new code; a stored environment they may not
    change), shown before they try; a verifiers id not allowed is refused once typed."""
    if environment is not None:
        return authoring.environment_refusal(user, {}, environment)
    return None if kind != "code" or authoring.can_author_code(user) else REFUSAL


def _verifiers_note(verifiers_id: str) -> str:
    """What the form says about verifiers on this machine before (or after) an id is typed."""
    if verifiers_id:
        return verifiers_problem(verifiers_id) or "it is installed."
    return "" if installed("verifiers") else "the verifiers package is not installed where the control plane runs."


def _verifiers_permission_note(can_author: bool) -> str:
    """Which ids this user may save, said before they try: loading one runs its package's code."""
    if can_author:
        return ""
    allowed = settings.VERIFIERS_ENVIRONMENTS_ALLOWED
    return (f"Loading a verifiers environment runs its package's code on the workers: without the permission "
            f"{authoring.PERMISSION!r} you may use only the ids an operator allows in "
            f"{authoring.ALLOW_LIST_SETTING}" + (f" ({', '.join(allowed)})." if allowed else ", and it lists none."))


def _saved(request, environment, created: bool):
    messages.success(request, f"Environment {environment.name!r} {'created' if created else 'saved'}.")
    return redirect("environment-edit", pk=environment.pk)


def _post(request, environment, kind: str):
    data, input_errors = _submission(request, kind)
    if refusal := authoring.environment_refusal(request.user, data, environment):
        return _page(request, environment, kind, data, {"non_field_errors": [refusal]}, status=403)
    saved, errors = (None, {}) if input_errors else _save(request, environment, data)
    if saved:
        return _saved(request, saved, created=environment is None)
    if kind == "builtin":
        errors = {**errors, "param_inputs": input_errors}
    elif input_errors:
        errors = {**errors, **input_errors}
    return _page(request, environment, kind, data, errors, status=400)


@login_required
@require_http_methods(["GET", "POST"])
def environment_new(request, kind: str):
    if kind not in KINDS:
        raise Http404("no such kind of environment")
    if request.method == "POST":
        return _post(request, None, kind)
    values = {"builtin": request.GET.get("builtin", ""), "source": forms.STARTER_SOURCE if kind == "code" else ""}
    return _page(request, None, kind, values, {})


@login_required
@require_http_methods(["GET", "POST"])
def environment_edit(request, pk: int):
    environment = Environment.objects.visible_or_404(request.user, pk)
    if request.method == "POST":
        return _post(request, environment, environment.kind)
    return _page(request, environment, environment.kind, _stored(environment), {})


@login_required
@require_POST
def environment_delete(request, pk: int):
    environment = Environment.objects.visible_or_404(request.user, pk)
    return delete_unless_used(request, environment, "Environment", "environment-edit", "environment-list")


# --- the dry run panel ----------------------------------------------------------------------
def _dry_run_context(request, environment) -> dict:
    if environment is None or environment.kind == Environment.Kind.VERIFIERS:
        return {"dry_run": None}
    playable = [m for m in found_models() if model_play_problem(m["value"]) is None]
    datasets = Dataset.objects.visible_to(request.user).order_by("name")
    return {"dry_run": {
        "url": reverse("environment-dry-run", args=[environment.pk]), "rowsUrl": reverse("reward-rows"),
        "datasets": [{"id": d.pk, "name": d.name} for d in datasets], "dataset": environment.dataset_id,
        "maxTurns": MAX_TURNS, "models": playable,
        "modelProblem": None if playable else model_play_problem(found_models()[0]["value"]),
        "sourceApi": (reverse("environment-detail", args=[environment.pk])
                      if environment.kind == Environment.Kind.CODE else None),
    }}


urlpatterns = [
    path("environments/", environment_list, name="environment-list"),
    path("environments/builtins/", environment_builtins, name="environment-builtins"),
    path("environments/new/<str:kind>/", environment_new, name="environment-new"),
    path("environments/<int:pk>/", environment_edit, name="environment-edit"),
    path("environments/<int:pk>/delete/", environment_delete, name="environment-delete"),
]
