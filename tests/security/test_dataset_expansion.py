"""A Parquet bomb uploaded through the API: a few KB on disk whose dictionary-encoded column repeats
one 512 KiB string 10,000 times (5 GB once read). Its footer describes the encoded pages, small and
true, so a check that believes the footer let it through, and reading its rows in the web server
copied gigabytes there. Now it is read in a process of its own whatever its size, its rows counted
as decoded: the answer is a 400 naming the row and DATASET_EXPANSION_MAX, nothing is stored, and
the web process neither reads it nor grows. (A footer that lies is not crafted here: no footer
size is read any more, so what one says changes nothing.)"""
import io
import resource

import psutil
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from runs.datasets.models import Dataset

VALUE_BYTES = 512 * 1024  # under DATASET_ROW_MAX_KB (1024), so only the expansion can refuse it
ROWS = 10_000
GROWTH_LIMIT_BYTES = 100 * 1024 * 1024


@pytest.fixture(autouse=True)
def folders(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.FILE_UPLOAD_TEMP_DIR = str(tmp_path / "spool")
    (tmp_path / "spool").mkdir()
    return tmp_path


@pytest.fixture
def web_process_reads(monkeypatch):
    """Parquet files read by this (the web) process: the check's child is another process."""
    import runs.datasets.formats as formats

    calls, read = [], formats._parquet_rows
    monkeypatch.setattr(formats, "_parquet_rows", lambda fileobj: calls.append(fileobj) or read(fileobj))
    return calls


def bomb() -> bytes:
    column = pa.DictionaryArray.from_arrays(pa.array([0] * ROWS, pa.int32()), pa.array(["p" * VALUE_BYTES]))
    buffer = io.BytesIO()
    pq.write_table(pa.table({"prompt": column}), buffer, compression="zstd")
    return buffer.getvalue()


def upload(api, name: str, content: bytes):
    return api.post("/api/datasets/", {"name": name.split(".")[0], "source": "upload",
                                       "file": SimpleUploadedFile(name, content)}, format="multipart")


def peak_rss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def test_a_parquet_bomb_is_refused_naming_the_row_without_the_web_process_reading_it(
        owner_api, folders, web_process_reads):
    content = bomb()
    assert len(content) < 16 * 1024  # a few KB on disk
    rss, peak = psutil.Process().memory_info().rss, peak_rss_bytes()

    answer = upload(owner_api, "bomb.parquet", content)

    assert answer.status_code == 400, answer.content
    (message,) = answer.json()["file"]
    # 3 × 512 KiB is past the floor of one row of DATASET_ROW_MAX_KB (1 MiB), itself over 32 × the file
    assert message.startswith("bomb.parquet: row 3: the rows up to here decode to more than 1048576 bytes, "
                              f"over 32 times the file's own {len(content)} bytes (DATASET_EXPANSION_MAX)"), message
    assert web_process_reads == []
    assert psutil.Process().memory_info().rss - rss < GROWTH_LIMIT_BYTES
    assert peak_rss_bytes() - peak < GROWTH_LIMIT_BYTES
    assert not Dataset.objects.exists()
    assert [p for p in folders.rglob("*") if p.is_file()] == []  # neither stored nor left in the spool


def test_an_honest_small_parquet_is_still_checked_apart_and_stored(owner_api, web_process_reads):
    buffer = io.BytesIO()
    pq.write_table(pa.table({"prompt": ["What is 1 + 1?", "What is 2 + 2?"], "answer": ["2", "4"]}), buffer)

    answer = upload(owner_api, "small.parquet", buffer.getvalue())

    assert answer.status_code == 201, answer.content
    body = answer.json()
    assert (body["state"], body["row_count"], body["columns"]) == ("ready", 2, ["prompt", "answer"])
    assert body["preview"][1] == {"prompt": "What is 2 + 2?", "answer": "4"}
    assert web_process_reads == []
