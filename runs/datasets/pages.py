"""Dataset pages: list, create (upload, hub id, built-in generator), detail with a preview, delete.

Creating goes through the API's DatasetSerializer, which runs the checks in runs/datasets/,
so a page and the API accept and refuse exactly the same datasets. The upload form is sent
by datasets.js straight to `POST /api/datasets/` (for upload progress); posted here it is the
same form without the script. A large upload is stored `checking` and its page follows the check
that the control plane's consumer runs (runs/datasets/deferred_check.py, dataset_check.js).
"""
import json

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db import IntegrityError
from django.db.models import Count, ProtectedError
from django.shortcuts import redirect, render
from django.urls import path
from django.views.decorators.http import require_http_methods
from pydantic import ValidationError

from runs.accounts.upload_quota import UploadQuotaExceeded
from runs.background.limits import UnfinishedLimitReached
from runs.configs.form_fields import SAVED_MEANWHILE, schema_fields, values_from_form
from runs.datasets.models import CheckState, Dataset
from runs.datasets.serializers import DatasetSerializer
from runs.training_runs.models import Run
from runs.web.errors import PayloadTooLarge
from worker.trainer.config import errors_by_field
from worker.trainer.for_control_plane.datasets import GENERATORS

SOURCES = ("upload", "hub", "generator")
# The fields each create form shows an error next to; any other error is shown above the button.
FORM_FIELDS = {
    "upload": {"source", "file", "name", "prompt_column"},
    "hub": {"name", "hub_id", "split", "prompt_column"},
    "generator": {"name", "generator", "generator_params", "prompt_column"},
}
RUNS_NAMED = 5


def _visible(request):
    return Dataset.objects.visible_to(request.user)


@login_required
def dataset_list(request):
    datasets = _visible(request).select_related("owner").annotate(run_count=Count("runs"))
    return render(request, "library/datasets/list.html", {"datasets": datasets})


# --- creating ------------------------------------------------------------------


def _generator_param_prefix(generator: str) -> str:
    return f"gen-{generator}-"


def _generator_forms(posted_generator: str = "", data=None, errors: dict | None = None) -> list[dict]:
    """Each built-in generator with its parameter fields (from its own schema); the posted one
    keeps what was typed and its errors."""
    forms = []
    for name, (params_model, _) in GENERATORS.items():
        mine = name == posted_generator
        values = values_from_form(params_model, data, _generator_param_prefix(name)) if mine and data else {}
        forms.append({"name": name, "fields": schema_fields(params_model, values, errors if mine else None,
                                                            _generator_param_prefix(name))})
    return forms


def _blank_forms() -> dict:
    return {source: {"values": {}, "errors": {}} for source in SOURCES}


def _render_new(request, forms: dict | None = None, active: str = "upload", generator_forms=None,
                status: int = 200):
    return render(request, "library/datasets/new.html", {
        "forms": forms or _blank_forms(), "active": active,
        "generator_forms": generator_forms or _generator_forms(),
        "max_upload_bytes": settings.DATASET_UPLOAD_MAX_BYTES,
        "max_upload_mib": settings.DATASET_UPLOAD_MAX_BYTES // (1024 * 1024),
    }, status=status)


def _common_fields(request) -> dict:
    return {"name": request.POST.get("name", "").strip(),
            "prompt_column": request.POST.get("prompt_column", "").strip() or "prompt"}


def _upload_data(request) -> tuple[dict, dict]:
    data = {**_common_fields(request), "source": "upload"}
    if "file" in request.FILES:
        data["file"] = request.FILES["file"]
    return data, {}


def _hub_data(request) -> tuple[dict, dict]:
    return {**_common_fields(request), "source": "hub", "hub_id": request.POST.get("hub_id", "").strip(),
            "split": request.POST.get("split", "").strip() or "train"}, {}


def _generator_data(request) -> tuple[dict, dict]:
    """The serializer's data, or parameter errors by field (checked by the generator's own
    schema first, so that each message lands next to its parameter)."""
    generator = request.POST.get("generator", "")
    data = {**_common_fields(request), "source": "generator", "generator": generator, "generator_params": {}}
    if generator not in GENERATORS:
        return data, {}  # the serializer names the choices
    params_model, _ = GENERATORS[generator]
    raw = values_from_form(params_model, request.POST, _generator_param_prefix(generator))
    try:
        data["generator_params"] = params_model.model_validate(raw).model_dump()
    except ValidationError as exc:
        return data, errors_by_field(exc)
    return data, {}


def _create(request, source: str):
    """(dataset, None, None), or (None, errors by field, generator parameter errors by field)."""
    data, param_errors = {"upload": _upload_data, "hub": _hub_data, "generator": _generator_data}[source](request)
    if param_errors:
        return None, {}, param_errors
    serializer = DatasetSerializer(data=data, context={"request": request})
    try:
        valid = serializer.is_valid()
    except PayloadTooLarge as exc:
        return None, {"file": [str(exc.detail)]}, {}
    except UploadQuotaExceeded as exc:
        return None, {"file": [str(exc)]}, {}
    if not valid:
        return None, serializer.errors, {}
    try:
        return serializer.save(owner=request.user), None, None
    except IntegrityError:  # the same name saved by another request since the check
        return None, {"name": [SAVED_MEANWHILE]}, {}
    except (UploadQuotaExceeded, UnfinishedLimitReached) as exc:  # the API's 507 and 429, said here
        return None, {"file": [str(exc)]}, {}


@login_required
@require_http_methods(["GET", "POST"])
def dataset_new(request):
    if request.method == "GET":
        return _render_new(request)
    source = request.POST.get("source", "")
    if source not in SOURCES:
        return _refuse_unknown_source(request, source)
    dataset, errors, param_errors = _create(request, source)
    if dataset is not None:
        checking = " Its file is large: its rows are being checked, as this page shows." \
            if dataset.state == CheckState.CHECKING else ""
        messages.success(request, f"Created dataset “{dataset.name}”.{checking}")
        return redirect("page-dataset", pk=dataset.pk)
    forms = _blank_forms()
    forms[source] = {"values": request.POST, "errors": errors, "other": _other_errors(source, errors)}
    generators = _generator_forms(request.POST.get("generator", ""), request.POST, param_errors)
    return _render_new(request, forms, active=source, generator_forms=generators, status=400)


def _other_errors(source: str, errors: dict) -> list[str]:
    return [f"{field}: {message}" if field != "non_field_errors" else str(message)
            for field, messages_ in errors.items() if field not in FORM_FIELDS[source]
            for message in (messages_ if isinstance(messages_, list) else [messages_])]


def _refuse_unknown_source(request, source: str):
    forms = _blank_forms()
    forms["upload"]["errors"] = {"source": [f"unknown source {source!r}; choose one of: {', '.join(SOURCES)}"]}
    return _render_new(request, forms, status=400)


# --- showing and deleting -------------------------------------------------------


def cell_text(value) -> str:
    """A preview value as text: strings as they are, chat prompts one message a line, the
    rest (numbers, lists, objects) as JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and value and all(isinstance(m, dict) and "role" in m for m in value):
        return "\n".join(f"{m.get('role')}: {m.get('content')}" for m in value)
    return json.dumps(value, ensure_ascii=False)


def preview_table(dataset: Dataset) -> dict:
    """Header cells and rows, in the dataset's column order, each cell marked if it is the prompt."""
    columns = list(dataset.columns)
    for row in dataset.preview:  # a later row may carry a key the first did not
        columns += [key for key in row if key not in columns]
    header = [{"name": name, "is_prompt": name == dataset.prompt_column} for name in columns]
    rows = [[{"text": cell_text(row[name]) if name in row else "", "missing": name not in row,
              "is_prompt": name == dataset.prompt_column} for name in columns]
            for row in dataset.preview]
    return {"header": header, "rows": rows}


def _runs_using(request, dataset: Dataset) -> dict:
    runs = dataset.runs.all()
    return {"count": runs.count(), "named": list(Run.objects.visible_to(request.user)
                                                 .filter(dataset=dataset).order_by("-created_at")[:RUNS_NAMED])}


@login_required
def dataset_detail(request, pk: int):
    dataset = Dataset.objects.visible_or_404(request.user, pk)
    return render(request, "library/datasets/detail.html", {
        "dataset": dataset, "preview": preview_table(dataset), "runs_using": _runs_using(request, dataset),
        "file_name": dataset.file.name.rsplit("/", 1)[-1] if dataset.file.name else "",
    })


@login_required
@require_http_methods(["GET", "POST"])
def dataset_delete(request, pk: int):
    dataset = Dataset.objects.visible_or_404(request.user, pk)
    runs_using = _runs_using(request, dataset)
    if request.method == "POST" and not runs_using["count"]:
        try:
            dataset.delete()
        except ProtectedError:  # a run was created since the count above
            runs_using = _runs_using(request, dataset)
        else:
            messages.success(request, f"Deleted dataset “{dataset.name}”.")
            return redirect("page-datasets")
    refused = request.method == "POST"
    return render(request, "library/datasets/delete.html", {
        "dataset": dataset, "runs_using": runs_using, "refused": refused,
    }, status=409 if refused else 200)


urlpatterns = [
    path("datasets/", dataset_list, name="page-datasets"),
    path("datasets/new/", dataset_new, name="page-dataset-new"),
    path("datasets/<int:pk>/", dataset_detail, name="page-dataset"),
    path("datasets/<int:pk>/delete/", dataset_delete, name="page-dataset-delete"),
]
