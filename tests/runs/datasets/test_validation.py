"""Checking an upload stays bounded: past DATASET_CHECK_TIMEOUT_S it stops with an error naming the
row it reached, a preview value nested too deep to store is refused, and an upload spooled to disk
(a large one) is checked in a process of its own, answering as the check in place would."""
import io
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from django.core.files.uploadedfile import TemporaryUploadedFile

from runs.datasets.formats import DatasetFileError
from runs.datasets.validation import inspect_file


def jsonl(rows) -> io.BytesIO:
    return io.BytesIO("".join(json.dumps(row) + "\n" for row in rows).encode())


def parquet_bytes(columns: dict) -> bytes:
    buffer = io.BytesIO()
    pq.write_table(pa.table(columns), buffer)
    return buffer.getvalue()


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


@pytest.fixture(autouse=True)
def spool_folder(settings, tmp_path):
    settings.FILE_UPLOAD_TEMP_DIR = str(tmp_path)


def spooled(name: str, content: bytes) -> TemporaryUploadedFile:
    upload = TemporaryUploadedFile(name, "application/octet-stream", len(content), None)
    upload.write(content)
    upload.flush()
    return upload


def test_an_upload_spooled_to_disk_is_checked_in_a_process_of_its_own(monkeypatch):
    monkeypatch.setattr("runs.datasets.validation.inspect_rows", None)  # not here, then
    upload = spooled("rows.parquet", parquet_bytes({"prompt": ["a", "b"], "n": [1, 2]}))
    inspection = inspect_file(upload, "parquet", "prompt")
    assert (inspection.columns, inspection.row_count, inspection.prompt_format) == (["prompt", "n"], 2, "text")
    assert inspection.preview == [{"prompt": "a", "n": 1}, {"prompt": "b", "n": 2}]


def test_a_spooled_upload_past_the_check_limit_is_stopped_naming_the_setting(settings):
    settings.DATASET_CHECK_TIMEOUT_S = 0
    upload = spooled("rows.jsonl", jsonl([{"prompt": "p"}] * 2500).getvalue())
    with pytest.raises(DatasetFileError, match=r"longer than 0 s \(DATASET_CHECK_TIMEOUT_S\), stopped at row 1000;"):
        inspect_file(upload, "jsonl", "prompt")


def test_a_spooled_upload_that_is_refused_names_its_line_and_field():
    upload = spooled("rows.jsonl", b'{"prompt": "a"}\n[1]\n')
    with pytest.raises(DatasetFileError, match="^line 2: expected a JSON object per line, found list$") as refused:
        inspect_file(upload, "jsonl", "prompt")
    assert refused.value.field == "file"


def test_a_small_parquet_upload_held_in_memory_is_still_checked_apart(monkeypatch, tmp_path):
    monkeypatch.setattr("runs.datasets.validation.inspect_rows", None)  # not here, then
    upload = io.BytesIO(parquet_bytes({"prompt": ["a"], "n": [1]}))
    inspection = inspect_file(upload, "parquet", "prompt")
    assert (inspection.columns, inspection.row_count) == (["prompt", "n"], 1)
    assert inspection.preview == [{"prompt": "a", "n": 1}]
    assert upload.tell() == 0 and list(tmp_path.iterdir()) == []  # left at its start; its copy removed
