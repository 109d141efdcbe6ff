"""An upload large enough to be spooled to disk is stored at once in `checking`, and the consumer's
check (deferred_check.check_stored, called here directly) ends it `ready` with what the check in a
request stores, or `refused` naming the line, its file removed. A run is refused on a dataset that
is not ready, saying which state it is in; a small upload is still checked within its request."""
import hashlib
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from runs.datasets import deferred_check
from runs.datasets.check_process import inspect_path
from runs.datasets.validation import inspect_rows
from runs.datasets.models import Dataset
from runs.datasets.models import CheckState

LARGE_ROWS = 60_000  # about 5 MB of JSONL: over FILE_UPLOAD_MAX_MEMORY_SIZE (4 MB), so spooled to disk


@pytest.fixture(autouse=True)
def media_root(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.FILE_UPLOAD_TEMP_DIR = str(tmp_path)
    return settings.MEDIA_ROOT


def large_jsonl(bad_row: int | None = None) -> bytes:
    rows = [{"prompt": f"What is {n} + {n}? Answer with the number only.", "answer": str(2 * n)}
            for n in range(LARGE_ROWS)]
    lines = [json.dumps(row) for row in rows]
    if bad_row is not None:
        lines[bad_row - 1] = "[1, 2]"
    return ("\n".join(lines) + "\n").encode()


def upload(api, content: bytes, name: str = "big.jsonl"):
    return api.post("/api/datasets/", {"name": name.split(".")[0], "source": "upload",
                                       "file": SimpleUploadedFile(name, content)}, format="multipart")


def test_a_large_upload_is_stored_at_once_in_checking_and_its_check_is_queued(
        owner_api, django_capture_on_commit_callbacks):
    content = large_jsonl()
    assert len(content) > 4 * 1024 * 1024
    with django_capture_on_commit_callbacks() as sent:
        response = upload(owner_api, content)
    assert response.status_code == 201, response.content
    body = response.json()
    assert (body["state"], body["row_count"], body["preview"]) == ("checking", None, [])
    assert body["size_bytes"] == len(content)
    assert body["check_progress"] == {"rows": 0, "bytes": 0, "total_bytes": len(content)}
    assert len(sent) == 1


def test_the_check_ends_ready_with_the_rows_preview_and_digest(owner_api):
    content = large_jsonl()
    dataset_id = upload(owner_api, content).json()["id"]
    deferred_check.check_stored(dataset_id)
    body = owner_api.get(f"/api/datasets/{dataset_id}/").json()
    assert (body["state"], body["row_count"], body["columns"], body["prompt_format"]) == \
        ("ready", LARGE_ROWS, ["prompt", "answer"], "text")
    assert body["preview"][0] == {"prompt": "What is 0 + 0? Answer with the number only.", "answer": "0"}
    assert body["sha256"] == hashlib.sha256(content).hexdigest()
    assert body["check_progress"]["rows"] == LARGE_ROWS and body["refusal"] == ""


def test_a_bad_row_ends_refused_naming_its_line_and_the_file_is_removed(owner_api, media_root):
    dataset_id = upload(owner_api, large_jsonl(bad_row=41_234)).json()["id"]
    deferred_check.check_stored(dataset_id)
    body = owner_api.get(f"/api/datasets/{dataset_id}/").json()
    assert body["state"] == "refused" and body["refusal_field"] == "file"
    assert body["refusal"] == "big.jsonl: line 41234: expected a JSON object per line, found list"
    assert body["row_count"] is None and not [p for p in media_root.rglob("*") if p.is_file()]


def test_a_check_delivered_again_or_after_a_delete_does_nothing(owner_api):
    dataset_id = upload(owner_api, large_jsonl()).json()["id"]
    deferred_check.check_stored(dataset_id)
    Dataset.objects.filter(pk=dataset_id).update(row_count=1)  # what a second check would overwrite
    deferred_check.check_stored(dataset_id)
    assert Dataset.objects.get(pk=dataset_id).row_count == 1
    Dataset.objects.filter(pk=dataset_id).delete()
    deferred_check.check_stored(dataset_id)  # no error, nothing made


def test_a_small_upload_is_still_refused_within_its_request(owner_api):
    response = upload(owner_api, b'{"prompt": "a"}\n[1]\n', name="small.jsonl")
    assert response.status_code == 400
    assert response.json() == {"file": ["small.jsonl: line 2: expected a JSON object per line, found list"]}
    assert not Dataset.objects.exists()


def test_the_check_reports_rows_and_bytes_read_as_it_goes(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_bytes(b'{"prompt": "p"}\n' * 2500)
    seen = []
    inspect_path(str(path), "jsonl", "prompt", progress=lambda rows, read: seen.append((rows, read)))
    assert seen and seen[0][0] == 1000 and 0 < seen[0][1] <= path.stat().st_size  # the first is always sent


def test_inspecting_rows_tells_progress_every_thousand_rows():
    seen = []
    inspect_rows(iter([{"prompt": "p"}] * 2500), "prompt", progress=seen.append)
    assert seen == [1000, 2000]


@pytest.mark.parametrize("state, refusal, message", [
    (CheckState.CHECKING, "", "dataset 'arith' is still being checked (0 rows so far); use it once its page says "
                              "it is ready"),
    (CheckState.REFUSED, "big.jsonl: line 3: not valid JSON", "dataset 'arith' was refused by its check: big.jsonl: "
                                                              "line 3: not valid JSON; upload a corrected file"),
])
def test_a_run_on_a_dataset_that_is_not_ready_is_refused_saying_why(owner_api, dataset, reward, state, refusal,
                                                                   message):
    Dataset.objects.filter(pk=dataset.pk).update(state=state, refusal=refusal)
    response = owner_api.post("/api/runs/", {"name": "r", "dataset": dataset.pk,
                                             "rewards": [{"reward_function": reward.pk}]}, format="json")
    assert response.status_code == 400
    assert response.json()["dataset"] == [message]


def test_a_run_whose_dataset_is_not_ready_cannot_start(owner_api, run, broker):
    Dataset.objects.filter(pk=run.dataset_id).update(state=CheckState.REFUSED, refusal="line 3: not valid JSON")
    response = owner_api.post(f"/api/runs/{run.pk}/start/")
    assert response.status_code == 409
    assert "was refused by its check: line 3: not valid JSON" in response.json()["detail"]
    assert not broker.called
