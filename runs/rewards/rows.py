"""Dataset rows for a dry run: read here, in the web server, from what the control plane holds."""
import math
from dataclasses import dataclass, field
from itertools import islice

from runs.datasets.formats import DatasetFileError, read_rows
from runs.datasets.models import Dataset
from runs.telemetry.models import Sample
from runs.training_runs.models import Run
from worker.trainer.for_control_plane.datasets import generate

# How far into a dataset a run's sample is looked for (by its prompt) to find its columns.
MATCH_SCAN_ROWS = 20_000


class RowsUnavailable(ValueError):
    """The rows cannot be had; `field` is the request field to change."""

    def __init__(self, field_name: str, message: str):
        super().__init__(message)
        self.field = field_name


@dataclass
class DryRunRow:
    index: int
    prompt: str
    columns: dict
    completions: list[str] = field(default_factory=list)
    note: str = ""


def json_safe(value):
    """A column value as strict JSON for showing: Parquet brings dates, bytes and NaN, which the
    API's renderer refuses. (The reward itself gets the values as read.)"""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, dict):
        return {str(key): json_safe(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(item) for item in value]
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return value.isoformat() if hasattr(value, "isoformat") else str(value)


def prompt_text(value) -> str:
    """A dataset prompt as text: chat messages are joined. (In a run, rewards see the prompt
    after the model's chat template; a dry run has no model, so it shows the prompt as written.)"""
    if isinstance(value, list):
        return "\n".join(str(m.get("content", "")) if isinstance(m, dict) else str(m) for m in value)
    return "" if value is None else str(value)


def raw_rows(dataset: Dataset, limit: int) -> list[dict]:
    if problem := dataset.readiness_problem():  # still being checked, or refused (its file removed)
        raise RowsUnavailable("dataset", problem)
    if dataset.source == Dataset.Source.UPLOAD:
        try:
            with dataset.file.open("rb") as handle:
                return list(islice(read_rows(handle, dataset.file_format), limit))
        except (OSError, ValueError, DatasetFileError) as exc:
            raise RowsUnavailable("dataset", f"dataset {dataset.name!r} cannot be read: {exc}") from None
    if dataset.source == Dataset.Source.GENERATOR:
        # Generators draw rows one after another from a seed: the first `limit` are the same either way.
        params = {**dataset.generator_params}
        params["count"] = min(limit, params.get("count", limit))
        try:
            return generate(dataset.generator, params)[:limit]
        except (KeyError, ValueError) as exc:
            raise RowsUnavailable("dataset", f"dataset {dataset.name!r} cannot be generated: {exc}") from None
    if dataset.preview:  # hub datasets are loaded only by workers; their preview rows are what is here
        return list(dataset.preview[:limit])
    raise RowsUnavailable("dataset", f"dataset {dataset.name!r} comes from the hub and has no preview rows here; "
                                     "dry-run on an uploaded or generated dataset")


def dataset_rows(dataset: Dataset, limit: int) -> list[DryRunRow]:
    rows = raw_rows(dataset, limit)
    if not rows:
        raise RowsUnavailable("dataset", f"dataset {dataset.name!r} has no rows")
    return [_row(i, row, dataset.prompt_column) for i, row in enumerate(rows)]


def _row(index: int, row: dict, prompt_column: str) -> DryRunRow:
    columns = {key: value for key, value in row.items() if key != prompt_column}
    return DryRunRow(index=index, prompt=prompt_text(row.get(prompt_column)), columns=columns)


def rows_to_score(request: dict) -> list[DryRunRow]:
    """The rows a validated dry-run request asks for (see rewards/dry_run_serializers.py)."""
    if "run" in request:
        return run_sample_rows(request["run"], request["step"], request["rows"])
    return typed_rows(request["dataset"], request["completions"])


def typed_rows(dataset: Dataset, completions: list[list[str]]) -> list[DryRunRow]:
    rows = dataset_rows(dataset, len(completions))
    if len(rows) < len(completions):
        raise RowsUnavailable("completions", f"{len(completions)} entries, but dataset {dataset.name!r} "
                                             f"has only {len(rows)} rows")
    for row, typed in zip(rows, completions):
        row.completions = typed
    return rows


def sample_steps(run: Run) -> list[int]:
    return sorted(set(Sample.objects.filter(run=run).values_list("step", flat=True)))


def run_sample_rows(run: Run, step: int, limit: int) -> list[DryRunRow]:
    """One row per group the run logged at `step`, with that group's completions; the
    columns come from the run's dataset row whose prompt the sample's prompt contains."""
    samples = list(Sample.objects.filter(run=run, step=step).order_by("group", "id"))
    if not samples:
        steps = sample_steps(run)
        shown = ", ".join(map(str, steps[-20:])) or "none yet"
        raise RowsUnavailable("step", f"run {run.pk} logged no samples at step {step}; steps with samples: {shown}")
    groups: dict[int, list[Sample]] = {}
    for sample in samples:
        groups.setdefault(sample.group, []).append(sample)
    candidates = _match_candidates(run.dataset)
    rows = []
    for index, members in enumerate(list(groups.values())[:limit]):
        prompt = members[0].prompt
        columns = next((cols for text, cols in candidates if text and text in prompt), None)
        rows.append(DryRunRow(index=index, prompt=prompt, columns=columns or {},
                              completions=[s.completion for s in members],
                              note="" if columns is not None else
                              "no dataset row has this prompt, so no columns are passed"))
    return rows


def _match_candidates(dataset: Dataset) -> list[tuple[str, dict]]:
    try:
        rows = dataset_rows(dataset, MATCH_SCAN_ROWS)
    except RowsUnavailable:
        return []
    return [(row.prompt.strip(), row.columns) for row in rows]
