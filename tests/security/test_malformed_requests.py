"""Malformed requests get a 4xx that says what is wrong, never a 500, and change nothing stored.

- JSON of 100,000 nested brackets raised a RecursionError in the parser (a 500) on every JSON
  route; JSON a little shallower than the interpreter's limit reached the views. Both are a 400
  naming the depth taken (runs/web/json_bodies.py).
- A Range of thousands of digits made int() raise (a 500); absurd ranges are a 416 or ignored.
- A page number of thousands of digits, or in digits other than ASCII's, was a 500.
"""
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from runs.web.json_bodies import JSON_MAX_DEPTH
from runs.checkpoints.models.upload import CheckpointUpload
from runs.datasets.models import Dataset
from runs.environments.models.environment import Environment
from runs.telemetry.models import LogLine, MetricPoint
from runs.rewards.models.function import RewardFunction
from runs.training_runs.models import Run, RunReward
from runs.configs.models import TrainingConfig

HUNDRED_THOUSAND_DEEP = "[" * 100_000 + "]" * 100_000
TOO_DEEP_FOR_US = json.dumps({"name": "deep", "values": json.loads("[" * JSON_MAX_DEPTH + "]" * JSON_MAX_DEPTH)})
TOO_DEEP = f"nested deeper than {JSON_MAX_DEPTH} levels"
ROWS = "".join(json.dumps({"prompt": f"{i} + {i}", "answer": str(2 * i)}) + "\n" for i in range(10)).encode()


@pytest.fixture(autouse=True)
def media_root(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.fixture
def api(owner_api):
    owner_api.raise_request_exception = False  # a 500 is an answer to assert on, not an exception
    return owner_api


def stored(run) -> dict:
    return {model.__name__: model.objects.count()
            for model in (Dataset, RewardFunction, TrainingConfig, Environment, Run, LogLine, MetricPoint,
                          CheckpointUpload)}


@pytest.mark.parametrize("method, path", [
    ("post", "/api/runs/"), ("post", "/api/configs/"), ("post", "/api/reward-functions/"),
    ("post", "/api/datasets/"), ("post", "/api/environments/"), ("patch", "/api/configs/{config}/"),
    ("patch", "/api/datasets/{dataset}/"), ("post", "/api/reward-functions/{reward}/dry-run/"),
])
@pytest.mark.parametrize("body", [HUNDRED_THOUSAND_DEEP, TOO_DEEP_FOR_US], ids=["100000-deep", "65-deep"])
def test_json_nested_too_deep_is_a_400_on_every_user_route(api, run, config, dataset, reward, method, path, body):
    before = stored(run)
    url = path.format(config=config.pk, dataset=dataset.pk, reward=reward.pk)
    answer = getattr(api, method)(url, body, content_type="application/json")
    assert answer.status_code == 400, answer.content[:300]
    assert TOO_DEEP in answer.json()["detail"]
    assert stored(run) == before


@pytest.mark.parametrize("path", ["events/", "uploads/10/begin", "uploads/10/complete"])
def test_json_nested_too_deep_is_a_400_on_the_workers_routes(client, started_run, path):
    client.raise_request_exception = False
    before = stored(started_run)
    answer = client.post(f"/api/runs/{started_run.pk}/{path}", HUNDRED_THOUSAND_DEEP, content_type="application/json",
                         HTTP_AUTHORIZATION=f"Bearer {started_run.test_token}")
    assert answer.status_code == 400, answer.content[:300]
    assert TOO_DEEP in answer.json()["detail"]
    assert stored(started_run) == before


@pytest.fixture
def run_on_a_file(owner_api, owner, reward, config) -> Run:
    answer = owner_api.post("/api/datasets/", {"name": "rows", "source": "upload",
                                               "file": SimpleUploadedFile("rows.jsonl", ROWS)}, format="multipart")
    assert answer.status_code == 201, answer.content
    run = Run.objects.create(owner=owner, name="on-file", dataset_id=answer.json()["id"], config=dict(config.values),
                             attempt=1)
    RunReward.objects.create(run=run, reward_function=reward)
    run.test_token = run.issue_ingest_token()
    run.save()
    return run


def fetch_with_range(client, run, value: str):
    client.raise_request_exception = False
    return client.get(f"/api/runs/{run.pk}/dataset/", HTTP_RANGE=value,
                      HTTP_AUTHORIZATION=f"Bearer {run.test_token}")


@pytest.mark.parametrize("value, status", [
    ("bytes=99999999999999999999999-", 416),   # starts past any file
    ("bytes=" + "9" * 5000 + "-", 416),         # more digits than int() takes
    ("bytes=-0", 416),                          # the last no bytes
    ("bytes=5-1", 200),                         # last before first: ignored
    ("bytes=-" + "9" * 5000, 206),              # the last "more than all" bytes: all of them
    ("bytes=0-" + "9" * 5000, 206),             # to past the end: to the end
    ("bytes=" + "0" * 5000 + "1-", 206),        # leading zeros are still byte 1
    ("bytes=" + ",".join(["0-1"] * 2000), 200),  # many ranges: ignored
    ("bytes=١-٢", 200),                          # not ASCII digits: ignored
    ("items=0-1", 200),                         # another unit: ignored
])
def test_an_absurd_range_is_a_416_or_ignored_never_a_500(client, run_on_a_file, value, status):
    answer = fetch_with_range(client, run_on_a_file, value)
    assert answer.status_code == status, answer.content[:300]
    if status == 416:
        assert answer["Content-Range"] == f"bytes */{len(ROWS)}"
        assert len(answer.json()["detail"]) < 300  # the header is quoted cut short
    if status == 206:
        assert answer["Content-Range"].endswith(f"-{len(ROWS) - 1}/{len(ROWS)}")


@pytest.mark.parametrize("query", ["page=²", "page=١", "page=0", "page=-1", "page=00"])
def test_an_absurd_page_number_is_a_400(api, run, query):
    answer = api.get(f"/api/runs/?{query}")
    assert answer.status_code == 400, answer.content[:300]
    assert "a whole number from 1" in answer.json()["page"][0] and len(answer.content) < 300


@pytest.mark.parametrize("path", ["/api/runs/?page=99999999999999999999", "/api/runs/?page=" + "9" * 5000,
                                  "/api/runs/99999999999999999999999/",
                                  "/api/runs/99999999999999999999999/diagnosis/",
                                  "/api/datasets/99999999999999999999/",
                                  "/api/runs/99999999999999999999999/checkpoints/99999999999999999999/download/"])
def test_a_huge_id_or_page_is_a_404(api, run, path):
    assert api.get(path).status_code == 404


def test_a_huge_page_size_is_the_largest_page(api, run):
    answer = api.get(f"/api/runs/{run.pk}/logs/?page_size=" + "9" * 5000)
    assert answer.status_code in (200, 404), answer.content[:300]


@pytest.mark.parametrize("path", ["/runs/new/?from=²", "/runs/new/?from=" + "9" * 40, "/runs/new/?dataset=²",
                                  "/runs/?q=²", "/runs/?q=" + "9" * 40])
def test_an_id_in_digits_no_database_holds_is_no_id_on_the_pages(logged_in, path):
    logged_in.raise_request_exception = False
    assert logged_in.get(path).status_code in (200, 404)


@pytest.mark.parametrize("for_run", ["²", "9" * 40])
def test_a_starting_run_that_is_no_id_is_a_401(client, run, for_run):
    client.raise_request_exception = False
    answer = client.get(f"/api/runs/{run.pk}/checkpoints/1/download/?for_run={for_run}",
                        HTTP_AUTHORIZATION="Bearer made-up")
    assert answer.status_code == 401, answer.content[:300]
