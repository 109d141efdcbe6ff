"""The run page's buttons: start, cancel, resume, clone. Each calls the same action the API's
verb does (runs.training_runs.lifecycle) and comes back to a run page with a message. Resume may
change the machines the run spans, checked by the API's own ResumeRequest."""
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect
from django.urls import path
from django.views.decorators.http import require_POST
from pydantic import ValidationError as SchemaError

from runs.accounts import authoring
from runs.training_runs.lifecycle import cancel_run, clone_run, resume_run, start_run
from runs.training_runs.models import IllegalTransition
from runs.training_runs.pages.visible_runs import visible_run
from runs.training_runs.serializers import ResumeRequest
from worker.trainer.config import TrainingConfig as ConfigSchema


def _attempt(request, pk: int, action, done):
    """Runs `action` on the run; `done` is the success message, or a function of the changed run."""
    run = visible_run(request, pk)
    try:
        changed = action(run)
    except IllegalTransition as exc:
        messages.error(request, f"Not done: {exc}.")
    except authoring.NotPermitted as exc:
        messages.error(request, f"Not done: {exc}.")
    except SchemaError as exc:  # a run stored outside the form or API no longer launches
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()[:5])
        messages.error(request, f"Not done: this run cannot be launched as stored ({problems}); clone it and fix that.")
    else:
        messages.success(request, done(changed) if callable(done) else done)
    return redirect("page-run", pk=run.pk)


@login_required
@require_POST
def start(request, pk: int):
    return _attempt(request, pk, start_run, "Started: the run is queued for a worker.")


@login_required
@require_POST
def cancel(request, pk: int):
    return _attempt(request, pk, cancel_run, _cancel_message)


def _cancel_message(run) -> str:
    if run.cancel_requested:
        return "Cancel requested: the worker stops the run at its next heartbeat."
    return "Cancelled before a worker took it."


MACHINE_FIELDS = ("trainer_machines", "trainer_processes", "inference_machines")


@login_required
@require_POST
def resume(request, pk: int):
    run = visible_run(request, pk)
    changes = machine_changes(request.POST, run.config)
    config = None
    if changes:
        body = ResumeRequest(data=changes, context={"request": request, "run": run})
        if not body.is_valid():
            messages.error(request, f"Not resumed: {'; '.join(error_lines(body.errors))}.")
            return redirect("page-run", pk=run.pk)
        config = body.validated_data["config"]
    moved = "".join(f", {name.replace('_', ' ')} {value if value is not None else 'one per GPU'}"
                    for name, value in changes.items())
    return _attempt(request, pk, lambda run: resume_run(run, config=config),
                    f"Resumed from the newest checkpoint{moved}: the run is queued again.")


def machine_changes(posted, config: dict) -> dict:
    """The machine counts the form changed from the run's config, as ResumeRequest takes them:
    an empty trainer_processes is null (one per GPU); text that is no number is passed on for the
    serializer to refuse by name."""
    changes: dict[str, int | str | None] = {}
    for name in MACHINE_FIELDS:
        raw = posted.get(name)
        if raw is None:
            continue
        value: int | str | None = _number(raw.strip())
        if value == "":  # emptied: unchanged, but for the processes, where empty is one per GPU
            if name != "trainer_processes":
                continue
            value = None
        if value != config.get(name, ConfigSchema.model_fields[name].default):
            changes[name] = value
    return changes


def _number(text: str) -> int | str:
    try:
        return int(text)
    except ValueError:
        return text


def error_lines(errors, prefix: str = "") -> list[str]:
    """DRF's nested errors as `field: message` lines."""
    if isinstance(errors, dict):
        return [line for field, value in errors.items()
                for line in error_lines(value, field if prefix in ("", "config") else f"{prefix}.{field}")]
    if isinstance(errors, list):
        return [line for value in errors for line in error_lines(value, prefix)]
    return [f"{prefix}: {errors}" if prefix and not str(errors).startswith(prefix) else str(errors)]


@login_required
@require_POST
def clone(request, pk: int):
    clone = clone_run(visible_run(request, pk), owner=request.user)
    messages.success(request, f"Cloned into “{clone.name}”: same dataset, rewards and settings. Start it when ready.")
    return redirect("page-run", pk=clone.pk)


urlpatterns = [
    path("runs/<int:pk>/start/", start, name="page-run-start"),
    path("runs/<int:pk>/cancel/", cancel, name="page-run-cancel"),
    path("runs/<int:pk>/resume/", resume, name="page-run-resume"),
    path("runs/<int:pk>/clone/", clone, name="page-run-clone"),
]
