"""Checks a dataset source and produces what is stored with it: columns, row count, preview.

A check reads an untrusted file: each row is bounded by the reader (formats.py), the whole check
by DATASET_CHECK_TIMEOUT_S, and what is stored of it (the preview) by PREVIEW_MAX_DEPTH, so that
rendering it never recurses past Python's limit. Parquet of any size is checked outside the web
server's process (check_process.py); a large upload of any format, by the control plane's
consumer (deferred_check.py).
"""
import math
import time
from dataclasses import dataclass
from itertools import islice

from django.conf import settings
from pydantic import ValidationError

from runs.datasets.check_process import inspect_copy, inspect_path
from runs.datasets.formats import DatasetFileError, read_rows
from worker.trainer.for_control_plane.datasets import GENERATORS, generate

# Read only in a process of its own, whatever their size: a few KB may decode to gigabytes.
CHECKED_APART = ("parquet",)
PREVIEW_ROWS = 5
PREVIEW_TEXT_LIMIT = 500
PREVIEW_MAX_DEPTH = 32
CLOCK_EVERY_ROWS = 1000


@dataclass
class Inspection:
    columns: list[str]
    row_count: int
    preview: list[dict]
    prompt_format: str

    def stored_fields(self) -> dict:
        """What a dataset row keeps of the inspection (runs.datasets.models.Dataset's fields)."""
        return {"columns": self.columns, "row_count": self.row_count,
                "preview": self.preview, "prompt_format": self.prompt_format}


def prompt_format_of(value, where: str) -> str:
    """'text' or 'chat'; anything else is an error naming the row."""
    if isinstance(value, str):
        if not value.strip():
            raise DatasetFileError(f"{where}: the prompt is empty")
        return "text"
    if isinstance(value, list) and value and all(
        isinstance(m, dict) and isinstance(m.get("role"), str) and isinstance(m.get("content"), str) for m in value
    ):
        return "chat"
    raise DatasetFileError(
        f"{where}: the prompt must be text or a list of chat messages with 'role' and 'content', "
        f"found {type(value).__name__}"
    )


def _clip(value):
    """A preview value that is short and strict JSON: Parquet brings dates, bytes and NaN,
    which the database's JSON column and the API's renderer would refuse, and PostgreSQL
    refuses the NUL character in text."""
    if isinstance(value, str):
        value = value.replace("\x00", "\ufffd")
        return value[:PREVIEW_TEXT_LIMIT] + "…" if len(value) > PREVIEW_TEXT_LIMIT else value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if value is None or isinstance(value, (bool, int)):
        return value
    if isinstance(value, dict):
        return {_clip(str(key)): _clip(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clip(item) for item in value]
    if isinstance(value, bytes):
        return _clip(value.decode("utf-8", errors="replace"))
    return _clip(value.isoformat() if hasattr(value, "isoformat") else str(value))


def _refuse_deep(row: dict, where: str) -> None:
    """A value nested deeper than PREVIEW_MAX_DEPTH is refused: walked without recursion."""
    stack = [(value, 1) for value in row.values()]
    while stack:
        value, depth = stack.pop()
        if depth > PREVIEW_MAX_DEPTH:
            raise DatasetFileError(f"{where}: a value nested more than {PREVIEW_MAX_DEPTH} levels deep")
        if isinstance(value, dict):
            stack.extend((item, depth + 1) for item in value.values())
        elif isinstance(value, (list, tuple)):
            stack.extend((item, depth + 1) for item in value)


def inspect_rows(rows, prompt_column: str, total: int | None = None, progress=None) -> Inspection:
    """Walks every row (so a broken row anywhere is found), keeping the first few for the preview.
    `progress(rows)`, when given, is told how far the check is every CLOCK_EVERY_ROWS rows."""
    columns: list[str] = []
    preview: list[dict] = []
    fmt = None
    count = 0
    deadline = time.monotonic() + settings.DATASET_CHECK_TIMEOUT_S
    for count, row in enumerate(rows, start=1):
        if count % CLOCK_EVERY_ROWS == 0 and progress is not None:
            progress(count)
        if count % CLOCK_EVERY_ROWS == 0 and time.monotonic() > deadline:
            raise DatasetFileError(f"checking the file took longer than {settings.DATASET_CHECK_TIMEOUT_S} s "
                                   f"(DATASET_CHECK_TIMEOUT_S), stopped at row {count}; upload fewer rows")
        if count == 1:
            columns = list(row)
            if prompt_column not in row:
                raise DatasetFileError(
                    f"no column {prompt_column!r} for the prompt; the file has: {', '.join(columns) or 'no columns'}",
                    field="prompt_column",
                )
        elif prompt_column not in row:
            raise DatasetFileError(f"row {count}: no {prompt_column!r} value (the first row has one)")
        row_format = prompt_format_of(row[prompt_column], f"row {count}")
        if fmt is None:
            fmt = row_format
        elif row_format != fmt:
            raise DatasetFileError(f"row {count}: prompt is {row_format} but earlier rows are {fmt}")
        if count <= PREVIEW_ROWS:
            _refuse_deep(row, f"row {count}")
            preview.append({key: _clip(value) for key, value in row.items()})
    if count == 0:
        raise DatasetFileError("the file has no rows")
    assert fmt is not None  # set by the first row
    return Inspection(columns=columns, row_count=total or count, preview=preview, prompt_format=fmt)


def inspect_file(fileobj, fmt: str, prompt_column: str, progress=None) -> Inspection:
    """An upload spooled to disk (a large one) or in a format CHECKED_APART is checked in a process
    of its own (check_process.py); a small text file, here."""
    spooled = getattr(fileobj, "temporary_file_path", None)
    if spooled is not None:
        return Inspection(**inspect_path(spooled(), fmt, prompt_column))
    if fmt in CHECKED_APART:
        return Inspection(**inspect_copy(fileobj, fmt, prompt_column))
    return inspect_rows(read_rows(fileobj, fmt), prompt_column, progress=progress)


def inspect_generator(name: str, params: dict, prompt_column: str) -> tuple[dict, Inspection]:
    """Validated params (defaults filled in) and an inspection of the first rows."""
    if name not in GENERATORS:
        raise DatasetFileError(f"no built-in generator {name!r}; choose one of: {', '.join(GENERATORS)}",
                               field="generator")
    params_model, _ = GENERATORS[name]
    try:
        full = params_model.model_validate(params).model_dump()
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise DatasetFileError(problems, field="generator_params") from None
    rows = generate(name, {**full, "count": min(full["count"], PREVIEW_ROWS)})
    return full, inspect_rows(islice(rows, PREVIEW_ROWS), prompt_column, total=full["count"])


def generator_fields(name: str, params: dict, prompt_column: str) -> dict:
    """What a generator dataset stores from its check: the params with defaults filled in, and
    the inspection of its first rows. The API and the demo run both store generator datasets
    through here, so that they store the same."""
    full_params, inspection = inspect_generator(name, params, prompt_column)
    return {"generator_params": full_params, **inspection.stored_fields()}
