"""Hostile dataset uploads against a live server: a JSON value nested 10^5 deep (which made the JSON
parser raise RecursionError, a 500) is refused with a 400 naming the line, nothing stored; a row
longer than DATASET_ROW_MAX_KB in a file large enough to be checked by the control plane's consumer
(read no further than the limit, not into one string the size of the file) ends refused naming the
line and the limit, its file removed, nothing else changed."""
import json
import time

import pytest

from tests.support import hostile_owner
from tests.support.controlplane_consumer import running_consumer

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


def test_json_nested_too_deep_is_refused_naming_its_line(server):
    before = hostile_owner.stored(server), uploaded_files(server)
    nested = json.dumps({"prompt": "fine"}) + "\n" + '{"prompt": "x", "deep": ' + "[" * 100_000 + "]" * 100_000 + "}\n"
    too_deep = upload(server, "nested.jsonl", nested.encode())
    assert too_deep.status_code == 400, too_deep.text
    assert too_deep.json()["file"] == ["nested.jsonl: line 2: JSON nested too deeply to read"]
    assert (hostile_owner.stored(server), uploaded_files(server)) == before


def test_a_row_too_long_in_a_large_file_ends_refused_naming_its_line(server):
    before = hostile_owner.stored(server)
    # 5 MiB: past the size checked within the request, so stored and checked by the consumer.
    enormous = json.dumps({"prompt": "What is 1 + 1?"}) + "\n" + json.dumps({"prompt": "x" * (5 << 20)}) + "\n"
    answer = upload(server, "enormous.jsonl", enormous.encode())
    assert answer.status_code == 201 and answer.json()["state"] == "checking", answer.text
    with running_consumer(server), hostile_owner.api(server) as api:
        deadline = time.monotonic() + 120
        while (dataset := api.get(f"/api/datasets/{answer.json()['id']}/").json())["state"] == "checking":
            assert time.monotonic() < deadline, dataset
            time.sleep(0.5)
    assert dataset["state"] == "refused"
    assert dataset["refusal"] == (f"enormous.jsonl: line 2: longer than {ROW_MAX_KB} KiB (DATASET_ROW_MAX_KB); "
                                  "a row must fit in one line of at most that")
    assert uploaded_files(server) == []  # the refused file is removed
    after = hostile_owner.stored(server)
    assert after["datasets"][:-1] == before["datasets"] and after["environments"] == before["environments"]
