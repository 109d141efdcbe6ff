"""Hostile dataset uploads against a live server: a row longer than DATASET_ROW_MAX_KB (read no
further than the limit, not into one string the size of the file; this upload is large enough to
be checked in a process of its own) and a JSON value nested 10^5 deep (which made the JSON parser
raise RecursionError, a 500) are refused with a 400 naming the line and the limit. Nothing is
stored: no dataset, no file."""
import json

import pytest

from tests.security import hostile_owner

ROW_MAX_KB = 256  # above the nested row (200 KB), so that its depth is what is refused


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    data_dir = tmp_path_factory.mktemp("server")
    running = hostile_owner.start(data_dir, env={"DATASET_ROW_MAX_KB": str(ROW_MAX_KB)})
    running.data_dir = data_dir
    yield running
    running.stop()


def upload(server, filename: str, content: bytes):
    with hostile_owner.api(server) as api:
        return api.post("/api/datasets/", data={"name": filename, "source": "upload"},
                        files={"file": (filename, content)})


def uploaded_files(server) -> list:
    return [p for p in (server.data_dir / "uploads").rglob("*") if p.is_file()]


def test_a_row_too_long_or_nested_too_deep_is_refused_naming_its_line(server):
    before = hostile_owner.stored(server), uploaded_files(server)
    fine = json.dumps({"prompt": "What is 1 + 1?"}) + "\n"
    # 5 MiB: past FILE_UPLOAD_MAX_MEMORY_SIZE, so spooled to disk and checked in a process of its own.
    enormous = fine + json.dumps({"prompt": "x" * (5 << 20)}) + "\n"
    nested = fine + '{"prompt": "x", "deep": ' + "[" * 100_000 + "]" * 100_000 + "}\n"
    too_long = upload(server, "enormous.jsonl", enormous.encode())
    too_deep = upload(server, "nested.jsonl", nested.encode())
    assert too_long.status_code == 400, too_long.text
    assert too_long.json()["file"] == [f"enormous.jsonl: line 2: longer than {ROW_MAX_KB} KiB (DATASET_ROW_MAX_KB); "
                                       "a row must fit in one line of at most that"]
    assert too_deep.status_code == 400, too_deep.text
    assert too_deep.json()["file"] == ["nested.jsonl: line 2: JSON nested too deeply to read"]
    assert (hostile_owner.stored(server), uploaded_files(server)) == before
