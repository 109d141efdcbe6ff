"""One file of a checkpoint (`?file=`): streamed alone with Range from this disk or a bucket, or,
where ARTIFACT_PRESIGNED_URL_S allows, a redirect to a presigned URL of the bucket (a real moto
server) after the same authorisation; a file the checkpoint lacks is a 404 naming it."""
import os

import httpx
import pytest

from runs.artifacts.stores import checkpoint_key
from runs.checkpoints.models.checkpoint import Checkpoint
from tests.support.telemetry import add_checkpoint

MODEL = os.urandom(300_000)


@pytest.fixture
def on_disk(settings, tmp_path, run):
    settings.RUNS_DIR = tmp_path / "runs"
    folder = settings.RUNS_DIR / str(run.pk) / "checkpoints" / "step-0000003"
    folder.mkdir(parents=True)
    (folder / "model.safetensors").write_bytes(MODEL)
    (folder / "config.json").write_text("{}")
    return add_checkpoint(run, 3, str(folder))


@pytest.fixture
def in_bucket(s3_server, s3_bucket, run):
    s3_server.client().put_object(Bucket=s3_bucket, Key=f"grpo/{checkpoint_key(run.pk, 9)}/model.safetensors",
                                  Body=MODEL)
    checkpoint = add_checkpoint(run, 9, "/worker/step-0000009")
    Checkpoint.objects.filter(pk=checkpoint.pk).update(in_store=True)
    return checkpoint


def url(checkpoint, file: str) -> str:
    return f"/api/runs/{checkpoint.run_id}/checkpoints/{checkpoint.pk}/download/?file={file}"


def body(response) -> bytes:
    return b"".join(response.streaming_content)


def test_one_file_of_a_checkpoint_on_disk_downloads_alone_and_by_range(owner_api, on_disk):
    whole = owner_api.get(url(on_disk, "model.safetensors"))
    assert whole.status_code == 200 and body(whole) == MODEL and whole["Accept-Ranges"] == "bytes"
    assert whole["Content-Length"] == str(len(MODEL)) and 'filename="model.safetensors"' in whole["Content-Disposition"]
    part = owner_api.get(url(on_disk, "model.safetensors"), HTTP_RANGE="bytes=1000-1999")
    assert part.status_code == 206 and body(part) == MODEL[1000:2000]


def test_a_file_the_checkpoint_lacks_is_a_404_naming_it(owner_api, on_disk):
    response = owner_api.get(url(on_disk, "optimizer.pt"))
    assert response.status_code == 404 and "'optimizer.pt'" in response.json()["detail"]


def test_another_users_request_for_a_file_is_a_404_as_for_the_tar(other_api, on_disk):
    assert other_api.get(url(on_disk, "model.safetensors")).status_code == 404


def test_from_a_bucket_it_streams_through_the_control_plane_by_default(owner_api, in_bucket):
    response = owner_api.get(url(in_bucket, "model.safetensors"), HTTP_RANGE="bytes=299000-")
    assert response.status_code == 206 and body(response) == MODEL[299_000:]


def test_with_presigned_links_a_bucket_file_is_a_redirect_the_client_follows_without_credentials(
        owner_api, other_api, in_bucket, settings):
    settings.ARTIFACT_PRESIGNED_URL_S = 60
    assert other_api.get(url(in_bucket, "model.safetensors")).status_code == 404  # authorised first
    response = owner_api.get(url(in_bucket, "model.safetensors"))
    assert response.status_code == 302 and "Expires=" in response["Location"]
    assert httpx.get(response["Location"]).content == MODEL
    ranged = httpx.get(response["Location"], headers={"Range": "bytes=10-19"})
    assert ranged.status_code == 206 and ranged.content == MODEL[10:20]
