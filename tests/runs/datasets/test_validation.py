"""Checking an upload in the web server stays bounded: past DATASET_CHECK_TIMEOUT_S it stops with an
error naming the row it reached, and a preview value nested too deep to store is refused."""
import io
import json

import pytest

from runs.datasets.formats import DatasetFileError
from runs.datasets.validation import inspect_file


def jsonl(rows) -> io.BytesIO:
    return io.BytesIO("".join(json.dumps(row) + "\n" for row in rows).encode())


def test_a_check_past_its_time_limit_stops_naming_the_row_it_reached(settings):
    settings.DATASET_CHECK_TIMEOUT_S = 0  # the clock is read every 1000 rows
    with pytest.raises(DatasetFileError, match=r"longer than 0 s \(DATASET_CHECK_TIMEOUT_S\), stopped at row 1000;"):
        inspect_file(jsonl([{"prompt": "p"}] * 2500), "jsonl", "prompt")


def test_a_preview_value_nested_too_deep_is_refused_naming_its_row():
    deep = "x"
    for _ in range(40):
        deep = [deep]
    with pytest.raises(DatasetFileError, match="^row 2: a value nested more than 32 levels deep$"):
        inspect_file(jsonl([{"prompt": "p"}, {"prompt": "p", "deep": deep}]), "jsonl", "prompt")


def test_values_nested_within_the_bound_are_previewed():
    inspection = inspect_file(jsonl([{"prompt": "p", "meta": {"a": [[1, 2]]}}]), "jsonl", "prompt")
    assert inspection.preview == [{"prompt": "p", "meta": {"a": [[1, 2]]}}]
