"""A run's uploaded dataset reaches its worker over HTTP, with the run's token and a checksum."""
import hashlib
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from runs.training_runs.launch import build_launch_spec
from runs.datasets.models import Dataset
from runs.training_runs.models import Run, RunReward

ROWS = [{"prompt": f"What is {i} + {i}?", "answer": f"#### {2 * i}"} for i in range(20)]
CONTENT = "".join(json.dumps(row) + "\n" for row in ROWS).encode()


@pytest.fixture(autouse=True)
def media_root(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.fixture
def uploaded(owner_api) -> Dataset:
    response = owner_api.post("/api/datasets/", {"name": "rows", "source": "upload",
                                                 "file": SimpleUploadedFile("rows.jsonl", CONTENT)}, format="multipart")
    assert response.status_code == 201, response.content
    return Dataset.objects.get(pk=response.json()["id"])


def run_with_token(owner, dataset, reward, config, name="on-upload") -> Run:
    run = Run.objects.create(owner=owner, name=name, dataset=dataset, config=dict(config.values), attempt=1)
    RunReward.objects.create(run=run, reward_function=reward)
    run.test_token = run.issue_ingest_token()
    run.save()
    return run


def fetch(client, run, token):
    return client.get(f"/api/runs/{run.pk}/dataset/", HTTP_AUTHORIZATION=f"Bearer {token}")


def test_an_upload_records_its_content_digest_and_size(uploaded):
    assert uploaded.sha256 == hashlib.sha256(CONTENT).hexdigest() and uploaded.size_bytes == len(CONTENT)


def test_the_runs_token_fetches_the_file_with_its_checksum(anon_api, owner, uploaded, reward, config):
    run = run_with_token(owner, uploaded, reward, config)
    response = fetch(anon_api, run, run.test_token)
    assert response.status_code == 200
    assert b"".join(response.streaming_content) == CONTENT
    assert response["X-Content-SHA256"] == hashlib.sha256(CONTENT).hexdigest()


def test_the_launch_spec_names_the_url_and_the_checksum(owner, uploaded, reward, config, settings):
    settings.PUBLIC_URL = "http://controlplane.example.org:8000"
    run = run_with_token(owner, uploaded, reward, config)
    dataset = build_launch_spec(run, run.test_token)["dataset"]
    assert dataset["url"] == f"http://controlplane.example.org:8000/api/runs/{run.pk}/dataset/"
    assert dataset["sha256"] == uploaded.sha256 and dataset["size_bytes"] == len(CONTENT)
    assert dataset["kind"] == "file" and dataset["format"] == "jsonl"


def test_another_runs_token_reads_as_no_such_run(anon_api, owner, uploaded, reward, config):
    run = run_with_token(owner, uploaded, reward, config)
    other = run_with_token(owner, uploaded, reward, config, name="other")
    response = fetch(anon_api, run, other.test_token)
    assert response.status_code == 404
    assert fetch(anon_api, Run(pk=999999), run.test_token).status_code == 404


def test_without_a_token_the_answer_says_how_to_send_one(anon_api, owner, uploaded, reward, config):
    run = run_with_token(owner, uploaded, reward, config)
    response = anon_api.get(f"/api/runs/{run.pk}/dataset/")
    assert response.status_code == 401 and "Bearer" in response.json()["detail"]


def test_a_dataset_that_is_no_file_is_not_served(anon_api, owner, dataset, reward, config):
    run = run_with_token(owner, dataset, reward, config)  # a generator: the worker makes its rows
    response = fetch(anon_api, run, run.test_token)
    assert response.status_code == 404 and "not an uploaded file" in response.json()["detail"]


def test_a_file_gone_from_the_control_plane_says_so(anon_api, owner, uploaded, reward, config):
    run = run_with_token(owner, uploaded, reward, config)
    uploaded.file.storage.delete(uploaded.file.name)
    response = fetch(anon_api, run, run.test_token)
    assert response.status_code == 404 and "no longer on the control plane" in response.json()["detail"]
