"""Checkpoints kept in an S3-compatible bucket (a real moto server): where the objects land,
what a bucket that is away does to an upload, and a setting that names no bucket."""
import pytest
from django.core.exceptions import ImproperlyConfigured

from runs.artifacts import checkpoint_store as store
from runs.artifacts.stores import artifact_store
from runs.checkpoints.models.checkpoint import Checkpoint
from tests.support.checkpoint_uploads import FILES, complete, manifest, upload_all
from tests.support.asgi_server import free_port


@pytest.fixture(autouse=True)
def artifacts_dir(settings, tmp_path):
    settings.ARTIFACTS_DIR = tmp_path / "artifacts"


def bucket_contents(s3_server, bucket) -> dict[str, bytes]:
    client = s3_server.client()
    keys = [item["Key"] for item in client.list_objects_v2(Bucket=bucket).get("Contents", [])]
    return {key: client.get_object(Bucket=bucket, Key=key)["Body"].read() for key in keys}


def test_a_whole_upload_lands_in_the_bucket_as_sent_and_leaves_no_copy_behind(anon_api, started_run,
                                                                                s3_server, s3_bucket):
    upload_all(anon_api, started_run)
    assert bucket_contents(s3_server, s3_bucket) == {}  # nothing before the manifest
    assert complete(anon_api, started_run, manifest()).json()["state"] == "done"
    folder = f"grpo/runs/{started_run.pk}/checkpoints/step-0000020"
    assert bucket_contents(s3_server, s3_bucket) == {f"{folder}/{path}": data for path, data in FILES.items()}
    assert not store.upload_folder(started_run.pk, 20).exists()
    assert artifact_store().location == f"s3://{s3_bucket}/grpo"


def test_a_bucket_that_is_away_delays_the_listing_and_keeps_what_arrived(anon_api, started_run, s3_server,
                                                                          s3_bucket, settings):
    upload_all(anon_api, started_run)
    settings.ARTIFACT_STORE_ENDPOINT_URL = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    away = complete(anon_api, started_run, manifest()).json()
    assert away["state"] == "failed" and "artifact store is unavailable" in away["detail"]
    assert away["send_again"] == []  # nothing to send again: complete again later
    assert not Checkpoint.objects.exists()
    assert store.received_bytes(started_run.pk, 20, "model.safetensors") == len(FILES["model.safetensors"])
    settings.ARTIFACT_STORE_ENDPOINT_URL = s3_server.url
    assert complete(anon_api, started_run, manifest()).json()["state"] == "done"  # the worker's retry
    assert Checkpoint.objects.get(run=started_run).in_store


def test_a_missing_bucket_is_named_in_the_answer(anon_api, started_run, s3_bucket, settings):
    upload_all(anon_api, started_run)
    settings.ARTIFACT_STORE_URL = "s3://no-such-bucket-here"
    away = complete(anon_api, started_run, manifest()).json()
    assert away["state"] == "failed" and "NoSuchBucket" in away["detail"]
    assert "s3://no-such-bucket-here" in away["detail"]


def test_a_download_while_the_bucket_is_away_is_a_503_not_a_broken_archive(anon_api, owner_api, started_run,
                                                                           s3_bucket, settings):
    upload_all(anon_api, started_run)
    complete(anon_api, started_run, manifest())
    checkpoint = Checkpoint.objects.get(run=started_run)
    settings.ARTIFACT_STORE_ENDPOINT_URL = f"http://127.0.0.1:{free_port()}"
    response = owner_api.get(f"/api/runs/{started_run.pk}/checkpoints/{checkpoint.pk}/download/")
    assert response.status_code == 503 and "try again later" in response.json()["detail"]


@pytest.mark.parametrize("url", ["s3://", "s3:///prefix-without-bucket"])
def test_a_store_url_without_a_bucket_is_refused_with_the_setting_named(settings, url):
    settings.ARTIFACT_STORE_URL = url
    with pytest.raises(ImproperlyConfigured, match="ARTIFACT_STORE_URL"):
        artifact_store()


def test_deleting_a_run_while_the_bucket_is_away_deletes_it_and_says_what_stayed(
        anon_api, owner_api, started_run, s3_bucket, settings, django_capture_on_commit_callbacks, caplog):
    from runs.training_runs.models import Run, RunReward

    upload_all(anon_api, started_run)
    complete(anon_api, started_run, manifest())
    settings.ARTIFACT_STORE_ENDPOINT_URL = f"http://127.0.0.1:{free_port()}"
    with django_capture_on_commit_callbacks(execute=True):
        RunReward.objects.filter(run=started_run).delete()
        Run.objects.filter(pk=started_run.pk).delete()
    assert not Run.objects.filter(pk=started_run.pk).exists()
    assert "checkpoints left in the store" in caplog.text


def test_a_file_over_the_multipart_threshold_goes_into_the_bucket_in_parts(anon_api, started_run, s3_server,
                                                                           s3_bucket, settings):
    settings.ARTIFACT_STORE_MULTIPART_BYTES = 5 * 1024 * 1024  # S3's smallest part
    big = {"model.safetensors": bytes(range(256)) * (11 * 4096), "config.json": b"{}"}  # 11 MiB: 3 parts
    upload_all(anon_api, started_run, files=big, chunk=4 * 1024 * 1024)
    assert complete(anon_api, started_run, manifest(files=big)).json()["state"] == "done"
    folder = f"grpo/runs/{started_run.pk}/checkpoints/step-0000020"
    client = s3_server.client()
    # A multipart object's ETag is the digest of its parts' digests, followed by their count.
    assert client.head_object(Bucket=s3_bucket, Key=f"{folder}/model.safetensors")["ETag"].endswith('-3"')
    assert "-" not in client.head_object(Bucket=s3_bucket, Key=f"{folder}/config.json")["ETag"]
    assert bucket_contents(s3_server, s3_bucket) == {f"{folder}/{path}": data for path, data in big.items()}
