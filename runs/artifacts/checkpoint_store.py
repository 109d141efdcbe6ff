"""Checkpoints uploaded by workers, on the control plane's disk under ARTIFACTS_DIR.

A worker sends each file in chunks, each at the offset the store has received so far, so an
upload broken off (the worker or the control plane gone) goes on where it stopped. The files
gather in an upload folder of their own; only when the worker's manifest has been checked
against every one of them (size and sha256) does the folder move, in one rename, to where
checkpoints are listed from. A half-uploaded checkpoint therefore never appears.
"""
import hashlib
import shutil
from pathlib import Path

from django.conf import settings

from worker.trainer.checkpoint_manifest import CheckpointManifest, safe_relative_path


class OffsetMismatch(Exception):
    """A chunk that does not start where the received bytes end; `received` says where that is."""

    def __init__(self, received: int):
        super().__init__(f"the upload holds {received} bytes of this file: send from there")
        self.received = received


def run_root(run_id: int) -> Path:
    return Path(settings.ARTIFACTS_DIR) / "runs" / str(run_id)


def checkpoint_folder(run_id: int, step: int) -> Path:
    return run_root(run_id) / "checkpoints" / f"step-{step:07d}"


def upload_folder(run_id: int, step: int) -> Path:
    return run_root(run_id) / "uploads" / f"step-{step:07d}"


def partial_file(run_id: int, step: int, relative: str) -> Path:
    return upload_folder(run_id, step) / safe_relative_path(relative)


def received_bytes(run_id: int, step: int, relative: str) -> int:
    path = partial_file(run_id, step, relative)
    return path.stat().st_size if path.is_file() else 0


def append_chunk(run_id: int, step: int, relative: str, offset: int, chunks) -> int:
    """Appends `chunks` (bytes) to the file if `offset` is where it ends; returns its new size.
    OSError (a full disk among them) leaves what was received before this chunk."""
    path = partial_file(run_id, step, relative)
    received = path.stat().st_size if path.is_file() else 0
    if offset != received:
        raise OffsetMismatch(received)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("ab") as out:
        try:
            for chunk in chunks:
                out.write(chunk)
            out.flush()
        except BaseException:
            out.truncate(received)
            raise
    return path.stat().st_size


def mismatched_files(run_id: int, step: int, manifest: CheckpointManifest) -> list[str]:
    """The manifest's files the upload lacks or holds otherwise; those are removed, to be sent again."""
    wrong = []
    for entry in manifest.files:
        path = partial_file(run_id, step, entry.path)
        if not path.is_file() or path.stat().st_size != entry.size or _sha256(path) != entry.sha256:
            wrong.append(entry.path)
            path.unlink(missing_ok=True)
    return wrong


def publish_checkpoint(run_id: int, step: int) -> Path:
    """Moves a checked upload to where checkpoints are kept, replacing an older one of the step."""
    final = checkpoint_folder(run_id, step)
    final.parent.mkdir(parents=True, exist_ok=True)
    if final.exists():
        shutil.rmtree(final)
    upload_folder(run_id, step).rename(final)
    return final


def remove_run_artifacts(run_id: int) -> None:
    shutil.rmtree(run_root(run_id), ignore_errors=True)


def _sha256(path: Path) -> str:
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()
