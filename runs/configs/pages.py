"""Training config pages: list, detail, create (optionally from a preset), edit, clone, delete.

Saving goes through the API's TrainingConfigSerializer, so a page and the API accept and
refuse exactly the same configs; the form itself comes from runs.configs.form_fields.
"""
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db import IntegrityError
from django.db.models import Count
from django.shortcuts import redirect, render
from django.urls import path, reverse
from django.views.decorators.http import require_http_methods

from runs.configs.form_fields import (
    SAVED_MEANWHILE,
    as_input_values,
    config_field_groups,
    config_values_from_form,
    default_values,
    preset_choices,
    preset_values,
    presets_for_script,
    show_value,
    unplaced_errors,
)
from runs.configs.models import TrainingConfig
from runs.configs.serializers import TrainingConfigSerializer
from worker.trainer.config import PRESETS

# The knobs that tell configs apart at a glance, shown as list columns.
LIST_KNOBS = ("model", "max_steps", "num_generations", "learning_rate", "worker_pool")


def _visible(request):
    return TrainingConfig.objects.visible_to(request.user)


@login_required
def config_list(request):
    configs = list(_visible(request).select_related("owner").annotate(run_count=Count("runs")))
    for config in configs:  # numbers as the form shows them (2e-05, not 0.00002)
        config.shown = {name: show_value(config.values.get(name)) for name in LIST_KNOBS}
    return render(request, "library/configs/list.html", {"configs": configs})


@login_required
def config_detail(request, pk: int):
    config = TrainingConfig.objects.visible_or_404(request.user, pk)
    return render(request, "library/configs/detail.html", {
        "config": config, "groups": config_field_groups(config.values), "run_count": config.runs.count(),
    })


def _starting_values(request, fallback: dict) -> dict:
    """A known ?preset= fills the form (the no-script way to pick one); otherwise `fallback`."""
    preset = request.GET.get("preset")
    return preset_values(preset) if preset in PRESETS else fallback


def _render_form(request, *, heading: str, form: dict, values: dict, errors: dict | None = None,
                 status: int = 200):
    errors = errors or {}
    value_errors = errors.get("values") or {}
    if not isinstance(value_errors, dict):  # e.g. "Expected a dictionary": nothing per field
        value_errors = {"non_field_errors": list(value_errors)}
    context = {
        "heading": heading, "form": form, "errors": errors,
        "groups": config_field_groups(values, value_errors),
        "form_problems": unplaced_errors(value_errors) + list(errors.get("non_field_errors", [])),
        "error_count": len(errors.get("name", [])) + len(errors.get("description", []))
        + sum(len(messages_) for messages_ in value_errors.values()),
        "presets": preset_choices(),
        "presets_data": {"presets": presets_for_script(), "defaults": as_input_values(default_values())},
    }
    return render(request, "library/configs/form.html", context, status=status)


def _save(request, instance: TrainingConfig | None):
    """(saved config, None) or (None, serializer errors)."""
    data = {"name": request.POST.get("name", "").strip(), "description": request.POST.get("description", ""),
            "values": config_values_from_form(request.POST)}
    serializer = TrainingConfigSerializer(instance, data=data, context={"request": request})
    if not serializer.is_valid():
        return None, serializer.errors
    try:
        return serializer.save(**({"owner": request.user} if instance is None else {})), None
    except IntegrityError:  # the same name saved by another request since the check
        return None, {"name": [SAVED_MEANWHILE]}


def _posted_form(request) -> dict:
    return {"name": request.POST.get("name", ""), "description": request.POST.get("description", "")}


@login_required
@require_http_methods(["GET", "POST"])
def config_new(request):
    if request.method == "POST":
        return _save_from_post(request, None, heading="New training config")
    return _render_form(request, heading="New training config", form={"name": "", "description": ""},
                        values=_starting_values(request, default_values()))


@login_required
@require_http_methods(["GET"])
def config_clone(request, pk: int):
    """The new-config form filled with a copy; nothing is stored until it is saved."""
    source = TrainingConfig.objects.visible_or_404(request.user, pk)
    form = {"name": f"{source.name} (copy)", "description": source.description, "action": reverse("page-config-new")}
    return _render_form(request, heading=f"Clone “{source.name}”", form=form,
                        values=_starting_values(request, source.values))


def _save_from_post(request, config, heading: str):
    """Creates (config None) or updates from the posted form: the saved config's page, or the
    form again with what was typed and the errors next to their fields."""
    config, errors = _save(request, config)
    if errors:
        return _render_form(request, heading=heading, form=_posted_form(request),
                            values=config_values_from_form(request.POST), errors=errors, status=400)
    messages.success(request, f"Saved config “{config.name}”.")
    return redirect("page-config", pk=config.pk)


@login_required
@require_http_methods(["GET", "POST"])
def config_edit(request, pk: int):
    config = TrainingConfig.objects.visible_or_404(request.user, pk)
    heading = f"Edit “{config.name}”"
    if request.method == "POST":
        return _save_from_post(request, config, heading)
    return _render_form(request, heading=heading, form={"name": config.name, "description": config.description},
                        values=_starting_values(request, config.values))


@login_required
@require_http_methods(["GET", "POST"])
def config_delete(request, pk: int):
    config = TrainingConfig.objects.visible_or_404(request.user, pk)
    if request.method == "POST":
        name = config.name
        config.delete()  # runs keep their own copy of the settings (config_template is SET_NULL)
        messages.success(request, f"Deleted config “{name}”.")
        return redirect("page-configs")
    return render(request, "library/configs/delete.html", {"config": config, "run_count": config.runs.count()})


urlpatterns = [
    path("configs/", config_list, name="page-configs"),
    path("configs/new/", config_new, name="page-config-new"),
    path("configs/<int:pk>/", config_detail, name="page-config"),
    path("configs/<int:pk>/edit/", config_edit, name="page-config-edit"),
    path("configs/<int:pk>/clone/", config_clone, name="page-config-clone"),
    path("configs/<int:pk>/delete/", config_delete, name="page-config-delete"),
]
