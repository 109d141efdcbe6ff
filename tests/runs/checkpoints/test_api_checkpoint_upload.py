"""A worker uploads a checkpoint to the control plane: declared, chunked, resumable, checked against
its manifest in the background, listed only once whole, downloadable wherever the worker ran.
Every test runs with both artifact stores: the filesystem and an S3 bucket on a real
S3-compatible server. The finishing task runs here as the consumer would run it
(`finish_in_background`, tests/support/checkpoint_uploads.py);
tests/worker/trainer/checkpoints/test_uploader.py runs it in a real consumer behind a live server."""
import errno
import hashlib
import io
import json
import tarfile
from datetime import timedelta

import pytest
from django.utils import timezone

from runs.checkpoints.finishing import finalize_upload
from runs.artifacts import checkpoint_store as store
from runs.checkpoints.models.checkpoint import Checkpoint
from runs.checkpoints.models.upload import CheckpointUpload, UploadState
from runs.training_runs.models import Run, RunReward
from tests.support.checkpoint_uploads import (FILES, begin, complete, finish_in_background, manifest, post_complete,
                                              put, upload_all, upload_state)
from worker.trainer.checkpoints.manifest import ARCHIVE_MANIFEST


@pytest.fixture(autouse=True, params=["filesystem", "s3"])
def artifact_store(request, settings, tmp_path):
    settings.ARTIFACTS_DIR = tmp_path / "artifacts"
    if request.param == "s3":
        request.getfixturevalue("s3_bucket")
    return request.param


def test_an_uploaded_checkpoint_is_listed_once_whole_and_downloads_as_sent(anon_api, owner_api, started_run):
    upload_all(anon_api, started_run)
    assert owner_api.get(f"/api/runs/{started_run.pk}/checkpoints/").json() == []  # not before the manifest
    response = complete(anon_api, started_run, manifest())
    assert response.status_code == 200 and response.json()["state"] == "done", response.content
    listed = owner_api.get(f"/api/runs/{started_run.pk}/checkpoints/").json()
    assert [(c["step"], c["in_store"], c["size_bytes"]) for c in listed] == [(20, True, sum(map(len, FILES.values())))]
    download = owner_api.get(f"/api/runs/{started_run.pk}/checkpoints/{listed[0]['id']}/download/")
    with tarfile.open(fileobj=io.BytesIO(b"".join(download.streaming_content))) as archive:
        got = {member.name.split("/", 1)[1]: archive.extractfile(member).read()
               for member in archive.getmembers() if member.isfile()}
    assert got == FILES


def test_the_poll_that_sees_done_tells_the_run_page_of_the_checkpoint(anon_api, started_run, monkeypatch):
    # The consumer announces the checkpoint from its own process, which an in-memory channel layer
    # does not carry to the web process's pages; the worker's poll comes through the web process.
    upload_all(anon_api, started_run)
    assert post_complete(anon_api, started_run, manifest()).status_code == 202
    finish_in_background(started_run)
    sent = []
    monkeypatch.setattr("runs.checkpoints.finishing.publish", sent.append)
    assert upload_state(anon_api, started_run).json()["state"] == "done"
    assert [(message.type, message.payload.step) for message in sent] == [("run.checkpoint", 20)]


def test_an_interrupted_file_goes_on_from_what_arrived(anon_api, started_run):
    data = FILES["model.safetensors"]
    begin(anon_api, started_run)
    put(anon_api, started_run, "model.safetensors", data[:3000])
    received = anon_api.get(f"/api/runs/{started_run.pk}/uploads/20/files/model.safetensors",
                            HTTP_AUTHORIZATION=f"Bearer {started_run.test_token}").json()["received"]
    assert received == 3000
    again = put(anon_api, started_run, "model.safetensors", data[:5000], offset=0)  # a retry from the start
    assert again.status_code == 409 and again.json()["received"] == 3000
    assert put(anon_api, started_run, "model.safetensors", data[3000:], offset=3000).json()["received"] == len(data)


def test_a_corrupted_file_is_named_to_send_again_by_the_finish_and_nothing_is_listed(anon_api, started_run):
    corrupted = {**FILES, "trainer_state.pt": b"xtate" + FILES["trainer_state.pt"][5:]}
    upload_all(anon_api, started_run, files=corrupted)
    response = complete(anon_api, started_run, manifest())
    assert response.json()["state"] == "failed" and response.json()["send_again"] == ["trainer_state.pt"]
    assert not Checkpoint.objects.exists()
    assert store.received_bytes(started_run.pk, 20, "trainer_state.pt") == 0  # removed, to be sent whole
    upload_all(anon_api, started_run, files={"trainer_state.pt": FILES["trainer_state.pt"]}, declared=FILES)
    assert complete(anon_api, started_run, manifest()).json()["state"] == "done"


def test_complete_answers_at_once_and_a_second_one_while_finishing_starts_no_second_finish(
        anon_api, owner_api, started_run, monkeypatch):
    enqueued = []
    monkeypatch.setattr("runs.checkpoints.finishing.enqueue", lambda *args: enqueued.append(args))
    upload_all(anon_api, started_run)
    first = post_complete(anon_api, started_run, manifest())
    assert first.status_code == 202 and first.json()["state"] == "finishing" and first.json()["round"] == 1
    again = post_complete(anon_api, started_run, manifest())
    assert again.status_code == 202 and again.json()["round"] == 1
    assert enqueued == [("finalize_checkpoint", CheckpointUpload.objects.get().pk, 1)]
    assert owner_api.get(f"/api/runs/{started_run.pk}/checkpoints/").json() == []  # not before it is finished
    assert finish_in_background(started_run) == 1
    done = post_complete(anon_api, started_run, manifest())  # the worker's retry after it finished
    assert done.status_code == 200 and done.json()["state"] == "done" and done.json()["checkpoint"]["id"]
    assert len(enqueued) == 1 and Checkpoint.objects.filter(run=started_run).count() == 1


def test_a_finish_whose_task_was_lost_starts_again_on_the_next_complete(anon_api, started_run, monkeypatch):
    from runs.checkpoints.models.upload import FINISHING_STALE_AFTER

    enqueued = []
    monkeypatch.setattr("runs.checkpoints.finishing.enqueue", lambda *args: enqueued.append(args))
    upload_all(anon_api, started_run)
    post_complete(anon_api, started_run, manifest())
    silent_since = timezone.now() - FINISHING_STALE_AFTER - timedelta(seconds=1)
    CheckpointUpload.objects.filter(run=started_run).update(updated_at=silent_since)  # its consumer died
    again = post_complete(anon_api, started_run, manifest())
    assert again.status_code == 202 and again.json()["round"] == 2
    assert [args[2] for args in enqueued] == [1, 2]
    upload = CheckpointUpload.objects.get(run=started_run)
    finalize_upload(upload.pk, 1)  # the lost round's message, delivered late: over
    assert CheckpointUpload.objects.get(run=started_run).state == UploadState.FINISHING
    assert finish_in_background(started_run) == 1
    assert upload_state(anon_api, started_run).json()["state"] == "done"


def test_a_finish_delivered_twice_finishes_once(anon_api, started_run):
    upload_all(anon_api, started_run)
    post_complete(anon_api, started_run, manifest())
    upload = CheckpointUpload.objects.get(run=started_run)
    finalize_upload(upload.pk, upload.round)
    finalize_upload(upload.pk, upload.round)  # the same message again: the round is over
    upload.refresh_from_db()
    assert (upload.state, upload.round) == (UploadState.DONE, 1)
    assert len(store.checkpoint_files(started_run.pk, 20)) == len(FILES)


def test_a_chunk_of_a_file_the_upload_did_not_declare_is_refused_naming_it(anon_api, started_run):
    begin(anon_api, started_run)
    response = put(anon_api, started_run, "stray.bin", b"x" * 10)
    assert response.status_code == 400 and "stray.bin is not among the files declared" in response.json()["detail"]
    assert store.received_bytes(started_run.pk, 20, "stray.bin") == 0


def test_a_chunk_before_the_upload_was_begun_is_refused_saying_so(anon_api, started_run):
    response = put(anon_api, started_run, "model.safetensors", b"x")
    assert response.status_code == 400 and "declare its files first" in response.json()["detail"]


def test_a_manifest_listing_a_file_the_upload_did_not_declare_is_refused_naming_it(anon_api, started_run):
    upload_all(anon_api, started_run)
    response = post_complete(anon_api, started_run, manifest(files={**FILES, "extra.bin": b"e"}))
    assert response.status_code == 400 and "did not declare: extra.bin" in response.json()["detail"]
    assert CheckpointUpload.objects.get(run=started_run).state == UploadState.RECEIVING  # nothing changed


def test_a_received_file_the_manifest_does_not_list_is_refused_naming_it(anon_api, started_run):
    upload_all(anon_api, started_run)
    fewer = {path: data for path, data in FILES.items() if path != "trainer_state.pt"}
    response = post_complete(anon_api, started_run, manifest(files=fewer))
    assert response.status_code == 400 and "does not list: trainer_state.pt" in response.json()["detail"]


def test_a_chunk_that_arrived_otherwise_than_its_sha256_is_not_kept(anon_api, started_run):
    data = FILES["model.safetensors"]
    begin(anon_api, started_run)
    put(anon_api, started_run, "model.safetensors", data[:1000])
    sent_digest = hashlib.sha256(data[1000:2000]).hexdigest()
    response = put(anon_api, started_run, "model.safetensors", b"X" + data[1001:2000], offset=1000,
                   HTTP_UPLOAD_CHUNK_SHA256=sent_digest)
    assert response.status_code == 422 and response.json()["send_again"] == ["model.safetensors"]
    assert response.json()["received"] == 1000 and "arrived otherwise than sent" in response.json()["detail"]
    assert put(anon_api, started_run, "model.safetensors", data[1000:2000], offset=1000,
               HTTP_UPLOAD_CHUNK_SHA256=sent_digest).json()["received"] == 2000


def test_a_chunk_past_the_files_declared_size_is_refused(anon_api, started_run):
    begin(anon_api, started_run, files={"model.safetensors": b"12345"})
    response = put(anon_api, started_run, "model.safetensors", b"123456")
    assert response.status_code == 422 and "declared 5 bytes long" in response.json()["detail"]
    assert store.received_bytes(started_run.pk, 20, "model.safetensors") == 0


def test_while_finishing_the_files_are_fixed(anon_api, started_run):
    upload_all(anon_api, started_run)
    post_complete(anon_api, started_run, manifest())
    assert put(anon_api, started_run, "model.safetensors", b"x", offset=len(FILES["model.safetensors"])) \
        .status_code == 409
    assert begin(anon_api, started_run).status_code == 409


def test_a_step_saved_again_reopens_its_upload_and_replaces_the_checkpoint(anon_api, started_run):
    upload_all(anon_api, started_run)
    complete(anon_api, started_run, manifest())
    again = {**FILES, "trainer_state.pt": b"later state"}
    upload_all(anon_api, started_run, files=again)
    assert complete(anon_api, started_run, manifest(files=again)).json()["state"] == "done"
    stored = {str(file.path): file.size for file in store.checkpoint_files(started_run.pk, 20)}
    assert stored["trainer_state.pt"] == len(b"later state")


def test_another_runs_token_gets_404(anon_api, started_run, owner, dataset, config):
    other = Run.objects.create(owner=owner, name="other", dataset=dataset, config=dict(config.values))
    token = other.issue_ingest_token()
    other.save()
    assert put(anon_api, started_run, "model.safetensors", b"x", token=token).status_code == 404


@pytest.mark.parametrize("path", ["../escape", "a/../../b", "%2Fetc%2Fpasswd"])
def test_a_path_outside_the_checkpoint_is_refused(anon_api, started_run, path):
    response = put(anon_api, started_run, path, b"x")
    assert response.status_code in (400, 404)
    assert not any(p.is_file() for p in store.run_root(started_run.pk).rglob("*"))


def test_a_manifest_for_another_step_or_malformed_is_a_400(anon_api, started_run):
    assert complete(anon_api, started_run, manifest(step=40)).status_code == 400
    refused = complete(anon_api, started_run, manifest(files={"../x": b"1"}))
    assert refused.status_code == 400 and "files.0.path" in " ".join(refused.json()["errors"])


def test_a_full_disk_is_a_507_that_says_so_and_keeps_what_arrived(anon_api, started_run, monkeypatch):
    data = FILES["model.safetensors"]
    begin(anon_api, started_run)
    put(anon_api, started_run, "model.safetensors", data[:1000])

    def disk_full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(store, "append_chunk", disk_full)
    response = put(anon_api, started_run, "model.safetensors", data[1000:2000], offset=1000)
    assert response.status_code == 507 and "disk is full" in response.json()["detail"]
    assert store.received_bytes(started_run.pk, 20, "model.safetensors") == 1000


def test_deleting_a_run_removes_its_uploaded_checkpoints(anon_api, started_run, django_capture_on_commit_callbacks,
                                                         owner, dataset, config, reward):
    upload_all(anon_api, started_run)
    complete(anon_api, started_run, manifest())
    assert len(store.checkpoint_files(started_run.pk, 20)) == len(FILES)
    with django_capture_on_commit_callbacks(execute=True):
        RunReward.objects.filter(run=started_run).delete()
        Run.objects.filter(pk=started_run.pk).delete()
    assert store.checkpoint_files(started_run.pk, 20) == []
    assert not store.run_root(started_run.pk).exists()


def test_a_resumed_run_is_told_where_to_fetch_its_uploaded_checkpoint(anon_api, started_run, settings):
    from runs.training_runs.launch import build_launch_spec

    settings.PUBLIC_URL = "http://controlplane.example.org"
    upload_all(anon_api, started_run)
    complete(anon_api, started_run, manifest())
    checkpoint = Checkpoint.objects.get(run=started_run)
    spec = build_launch_spec(started_run, started_run.test_token, resume_from=checkpoint)
    assert spec["resume_from"] == "/worker/out/checkpoints/step-0000020"
    assert spec["resume_url"] == f"http://controlplane.example.org/api/runs/{started_run.pk}/uploads/20/archive"
    archive = anon_api.get(f"/api/runs/{started_run.pk}/uploads/20/archive",
                           HTTP_AUTHORIZATION=f"Bearer {started_run.test_token}")
    with tarfile.open(fileobj=io.BytesIO(b"".join(archive.streaming_content))) as tar:
        names = {m.name for m in tar.getmembers() if m.isfile()}
        assert names == {f"step-0000020/{path}" for path in FILES} | {ARCHIVE_MANIFEST}
        kept = json.loads(tar.extractfile(ARCHIVE_MANIFEST).read())  # for the worker to check what it unpacks
    assert kept == manifest()
    missing = anon_api.get(f"/api/runs/{started_run.pk}/uploads/40/archive",
                           HTTP_AUTHORIZATION=f"Bearer {started_run.test_token}")
    assert missing.status_code == 404


def test_a_checkpoint_listed_before_checksums_were_kept_is_served_without_a_manifest(anon_api, started_run):
    upload_all(anon_api, started_run)
    complete(anon_api, started_run, manifest())
    Checkpoint.objects.filter(run=started_run).update(files=[])
    archive = anon_api.get(f"/api/runs/{started_run.pk}/uploads/20/archive",
                           HTTP_AUTHORIZATION=f"Bearer {started_run.test_token}")
    with tarfile.open(fileobj=io.BytesIO(b"".join(archive.streaming_content))) as tar:
        assert {m.name for m in tar.getmembers() if m.isfile()} == {f"step-0000020/{path}" for path in FILES}


LORA_FILES = {"adapter_model.safetensors": b"adapter", "adapter_config.json": b"{}", "tokenizer.json": b"{}",
              "trainer_state.pt": b"state", "optimizer/__0_0.distcp": b"moments",
              "merged/model.safetensors": b"merged weights",
              "merged/config.json": b"{}", "merged/tokenizer.json": b"{}"}


def exported(owner_api, run, part, files=FILES):
    checkpoint = Checkpoint.objects.get(run=run)
    response = owner_api.get(f"/api/runs/{run.pk}/checkpoints/{checkpoint.pk}/download/", {"part": part})
    if response.status_code != 200:
        return response.status_code, response.json()["detail"]
    with tarfile.open(fileobj=io.BytesIO(b"".join(response.streaming_content))) as archive:
        return 200, {m.name for m in archive.getmembers() if m.isfile()}


def test_a_checkpoint_exports_as_a_model_ready_to_serve_without_its_optimizer_state(anon_api, owner_api,
                                                                                 started_run):
    upload_all(anon_api, started_run)
    complete(anon_api, started_run, manifest())
    assert exported(owner_api, started_run, "model") == (200, {
        "step-0000020-model/model.safetensors", "step-0000020-model/tokenizer/tokenizer.json"})
    status, detail = exported(owner_api, started_run, "adapter")
    assert status == 404 and "not a LoRA adapter" in detail
    assert exported(owner_api, started_run, "everything")[0] == 400


def test_a_lora_runs_last_checkpoint_exports_its_adapter_and_its_merged_model(anon_api, owner_api, started_run):
    upload_all(anon_api, started_run, files=LORA_FILES)
    complete(anon_api, started_run, manifest(files=LORA_FILES))
    assert exported(owner_api, started_run, "model") == (200, {
        "step-0000020-model/model.safetensors", "step-0000020-model/config.json", "step-0000020-model/tokenizer.json"})
    assert exported(owner_api, started_run, "adapter") == (200, {
        "step-0000020-adapter/adapter_model.safetensors", "step-0000020-adapter/adapter_config.json",
        "step-0000020-adapter/tokenizer.json"})


def test_an_earlier_lora_checkpoint_says_where_the_merged_model_is(anon_api, owner_api, started_run):
    adapter_only = {name: data for name, data in LORA_FILES.items() if not name.startswith("merged/")}
    upload_all(anon_api, started_run, files=adapter_only)
    complete(anon_api, started_run, manifest(files=adapter_only))
    status, detail = exported(owner_api, started_run, "model")
    assert status == 404 and "the run's last checkpoint also holds the merged model" in detail


def test_resuming_a_run_discards_what_its_last_attempt_left_half_uploaded(anon_api, owner_api, started_run,
                                                                          django_capture_on_commit_callbacks):
    upload_all(anon_api, started_run)
    complete(anon_api, started_run, manifest())
    begin(anon_api, started_run, step=30)
    put(anon_api, started_run, "model.safetensors", FILES["model.safetensors"][:1000], step=30)
    Run.objects.filter(pk=started_run.pk).update(status="lost")
    with django_capture_on_commit_callbacks(execute=True):
        assert owner_api.post(f"/api/runs/{started_run.pk}/resume/").status_code == 200
    assert store.received_bytes(started_run.pk, 30, "model.safetensors") == 0  # the new attempt sends it whole
    assert len(store.checkpoint_files(started_run.pk, 20)) == len(FILES)  # what was whole stays
