"""Checkpoints a worker uploaded: completed (at once), finished in the background, listed, announced.

`complete_upload` is what the worker's complete does inside its request: a few stats and one
conditional UPDATE, whatever the checkpoint's size; it enqueues `finalize_checkpoint`
(runs/checkpoints/tasks.py) only when it is the call that started the finish. The task reads
every file once to check it against the manifest, moves the folder into the store (a bucket takes
big files as multipart uploads) and lists the checkpoint; the worker polls the upload's state.
"""
import errno
import logging

from django.db import transaction
from django.utils import timezone

from runs.artifacts import checkpoint_store as store
from runs.artifacts.stores import StoreUnavailable, artifact_store
from runs.background.tasks import enqueue
from runs.checkpoints.models.checkpoint import Checkpoint
from runs.checkpoints.models.upload import CheckpointUpload, UploadState
from runs.live.events import publish
from runs.live.messages import CheckpointMessage
from runs.training_runs.models import Run
from worker.trainer.checkpoints.manifest import CheckpointManifest

log = logging.getLogger(__name__)
FINALIZE_TASK = "finalize_checkpoint"


class ManifestRefused(Exception):
    """The manifest does not describe what this upload declared and received; nothing changed."""


def complete_upload(upload: CheckpointUpload, manifest: CheckpointManifest) -> tuple[CheckpointUpload, list[str]]:
    """Starts finishing `upload` against `manifest` unless another complete did; returns the
    upload as it now is and the files to send again before it can (missing or short: no finish)."""
    if upload.state in (UploadState.RECEIVING, UploadState.FAILED):
        _check_against_declared(upload, manifest)
        if short := store.short_files(upload.run_id, upload.step, manifest):
            return upload, short
    with transaction.atomic():
        if upload.start_finishing(manifest.model_dump()):
            enqueue(FINALIZE_TASK, upload.pk, upload.round)
    return upload, []


def _check_against_declared(upload: CheckpointUpload, manifest: CheckpointManifest) -> None:
    declared = upload.declared_sizes
    if undeclared := [entry.path for entry in manifest.files if entry.path not in declared]:
        raise ManifestRefused(f"the manifest lists file(s) this upload did not declare: {', '.join(undeclared[:10])}")
    if unlisted := store.files_not_in(upload.run_id, upload.step, manifest):
        raise ManifestRefused(f"the upload holds file(s) the manifest does not list: {', '.join(unlisted[:10])}")


def finalize_upload(upload_id: int, round: int) -> None:
    """The background half of a complete: check, store, list. Runs once per round; a second
    delivery of the same message, or one for a round that is over, does nothing. Whatever goes
    wrong ends the round FAILED with what it was, so the worker polling it is told."""
    upload = CheckpointUpload.objects.select_related("run").filter(pk=upload_id).first()
    if upload is None or upload.state != UploadState.FINISHING or upload.round != round:
        return
    try:
        _finalize(upload, round)
    except Exception as exc:
        log.exception("finishing the upload of run %s step %s", upload.run_id, upload.step)
        upload.mark_failed(round, f"the control plane could not finish it ({type(exc).__name__}); complete again")
        raise


def _finalize(upload: CheckpointUpload, round: int) -> None:
    manifest = CheckpointManifest.model_validate(upload.manifest)
    run_id, step = upload.run_id, upload.step
    if not upload.note_progress(round, "checking the files against the manifest"):
        return

    def checked(done: int, total: int) -> None:
        upload.note_progress(round, f"checked {done} of {total} file(s) against the manifest")

    def stored(done: int, total: int) -> None:
        upload.note_progress(round, f"stored {done} of {total} file(s) in {artifact_store().location}")

    wrong = store.mismatched_files(run_id, step, manifest, on_file=checked)
    if wrong:
        upload.mark_failed(round, f"{len(wrong)} file(s) arrived otherwise than the manifest says; send them "
                                  f"again", send_again=wrong)
        return
    upload.note_progress(round, f"checked; storing it in {artifact_store().location}")
    try:
        # Outside any transaction: on SQLite a write transaction held through a long copy into a
        # bucket would stop every other write (ingest included) until it ends.
        store.publish_checkpoint(run_id, step, on_file=stored)
    except StoreUnavailable as exc:
        upload.mark_failed(round, f"the artifact store is unavailable: {exc}; complete again later")
        return
    except OSError as exc:
        if exc.errno != errno.ENOSPC:
            raise
        upload.mark_failed(round, "the control plane's disk is full; complete again once there is room")
        return
    with transaction.atomic():
        checkpoint = list_uploaded_checkpoint(upload.run, manifest, received_at=timezone.now())
        upload.mark_done(round, f"listed: {checkpoint.size_bytes} bytes")


def list_uploaded_checkpoint(run: Run, manifest: CheckpointManifest, received_at) -> Checkpoint:
    """The upload of `manifest.step`, checked and stored, listed as the run's checkpoint of that step."""
    checkpoint, _ = Checkpoint.objects.update_or_create(
        run=run, step=manifest.step,
        defaults={"path": manifest.local_path, "size_bytes": manifest.size_bytes,
                  "model_version": manifest.model_version, "created_at": received_at, "in_store": True,
                  "files": [file.model_dump() for file in manifest.files]})
    publish(CheckpointMessage.of(run, checkpoint))  # sent once the caller's transaction commits
    return checkpoint


def announce_listed(upload) -> None:
    """Tells the run's open pages, again, of the checkpoint a finished upload listed. The consumer
    announced it when it listed it, but an in-memory channel layer (the embedded default) does not
    reach the web process's pages from another process; the worker's poll that sees `done` comes
    through the web process, whose pages it does reach. Pages keep checkpoints by id: twice is once."""
    checkpoint = Checkpoint.objects.filter(run_id=upload.run_id, step=upload.step).first()
    if checkpoint is not None:
        publish(CheckpointMessage.of(upload.run, checkpoint))

