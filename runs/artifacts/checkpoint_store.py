"""Checkpoints uploaded by workers: received on the control plane's disk, then kept in the store.

A worker declares the files it will send, then sends each in chunks, each at the offset received
so far, so an upload broken off (the worker or the control plane gone) goes on where it stopped.
Every chunk is hashed as it is written and compared with the sha256 the worker sent with it, so
bytes that arrive otherwise are refused at once and sent again. The files gather in an upload
folder under ARTIFACTS_DIR; only when the worker's manifest has been checked against every one of
them (size and sha256, read once, in the background: runs/checkpoints/finishing.py) does the folder
move into the artifact store (runs/artifacts/stores.py: this disk or a bucket), and only then is
the checkpoint listed. A half-uploaded checkpoint therefore never appears.
"""
import hashlib
import logging
import shutil
from collections.abc import Callable
from pathlib import Path

from django.conf import settings

from runs.artifacts.checkpoint_files import CheckpointFile
from runs.artifacts.stores import StoreUnavailable, artifact_store, step_folder
from worker.trainer.checkpoints.manifest import CheckpointManifest, safe_relative_path

log = logging.getLogger(__name__)


class OffsetMismatch(Exception):
    """A chunk that does not start where the received bytes end; `received` says where that is."""

    def __init__(self, received: int):
        super().__init__(f"the upload holds {received} bytes of this file: send from there")
        self.received = received


class ChunkRefused(Exception):
    """A chunk that arrived otherwise than sent, or runs past the file's declared size: not kept."""


class QuotaExceeded(Exception):
    """A chunk that would take the run's checkpoints past RUN_CHECKPOINT_QUOTA_GB: not written."""

    def __init__(self, held: int, incoming: int):
        quota = settings.RUN_CHECKPOINT_QUOTA_BYTES
        super().__init__(f"this run's checkpoints hold {_gib(held)} of its {_gib(quota)} quota "
                         f"(RUN_CHECKPOINT_QUOTA_GB); {incoming} more bytes would pass it, so none were written")


def check_quota(held: int, incoming: int) -> int:
    """Room left for this run after `incoming` bytes; QuotaExceeded when they do not fit."""
    room = settings.RUN_CHECKPOINT_QUOTA_BYTES - held
    if incoming > room:
        raise QuotaExceeded(held, incoming)
    return room - incoming


def uploading_bytes(run_id: int) -> int:
    """Bytes received of checkpoints not yet listed (listed ones are counted from their rows)."""
    folder = run_root(run_id) / "uploads"
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file()) if folder.is_dir() else 0


def run_root(run_id: int) -> Path:
    return Path(settings.ARTIFACTS_DIR) / "runs" / str(run_id)


def upload_folder(run_id: int, step: int) -> Path:
    return run_root(run_id) / "uploads" / step_folder(step)


def partial_file(run_id: int, step: int, relative: str) -> Path:
    return upload_folder(run_id, step) / safe_relative_path(relative)


def received_bytes(run_id: int, step: int, relative: str) -> int:
    path = partial_file(run_id, step, relative)
    return path.stat().st_size if path.is_file() else 0


def append_chunk(run_id: int, step: int, relative: str, offset: int, chunks, declared_size: int,
                 sha256: str | None = None) -> int:
    """Appends `chunks` (bytes) to the file if `offset` is where it ends; returns its new size.
    The chunk is hashed as it is written: one whose sha256 is not `sha256` (when given), or that
    would take the file past `declared_size`, is cut off again and refused (ChunkRefused).
    OSError (a full disk among them) leaves what was received before this chunk."""
    path = partial_file(run_id, step, relative)
    received = path.stat().st_size if path.is_file() else 0
    if offset != received:
        raise OffsetMismatch(received)
    path.parent.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    with path.open("ab") as out:
        try:
            for chunk in chunks:
                if out.tell() + len(chunk) > declared_size:
                    raise ChunkRefused(f"{relative} was declared {declared_size} bytes long; this chunk "
                                       f"runs past that")
                digest.update(chunk)
                out.write(chunk)
            if sha256 and digest.hexdigest() != sha256.lower():
                raise ChunkRefused(f"the chunk of {relative} at byte {offset} arrived otherwise than sent "
                                   f"(sha256 {digest.hexdigest()[:12]}..., not {sha256[:12]}...): send it again")
            out.flush()
        except BaseException:
            out.truncate(received)
            raise
    return path.stat().st_size


def keep_only_declared(run_id: int, step: int, declared: dict[str, int]) -> None:
    """Removes received files the upload no longer declares, or longer than declared now (the
    step saved again): what stays can only go on as the worker sends it."""
    folder = upload_folder(run_id, step)
    if not folder.is_dir():
        return
    for path in folder.rglob("*"):
        if path.is_file() or path.is_symlink():
            relative = path.relative_to(folder).as_posix()
            if relative not in declared or path.stat().st_size > declared[relative]:
                path.unlink()


def files_not_in(run_id: int, step: int, manifest: CheckpointManifest) -> list[str]:
    """Received files the manifest does not list, sorted."""
    folder, listed = upload_folder(run_id, step), {entry.path for entry in manifest.files}
    if not folder.is_dir():
        return []
    return sorted(relative for path in folder.rglob("*") if path.is_file()
                  and (relative := path.relative_to(folder).as_posix()) not in listed)


def short_files(run_id: int, step: int, manifest: CheckpointManifest) -> list[str]:
    """The manifest's files whose received size is not the manifest's (a stat each, no reading);
    one longer than the manifest says cannot come right and is removed, to be sent whole."""
    wrong = []
    for entry in manifest.files:
        if (received := received_bytes(run_id, step, entry.path)) != entry.size:
            wrong.append(entry.path)
            if received > entry.size:
                partial_file(run_id, step, entry.path).unlink()
    return wrong


def mismatched_files(run_id: int, step: int, manifest: CheckpointManifest,
                     on_file: Callable[[int, int], None] = lambda done, total: None) -> list[str]:
    """The manifest's files the upload lacks or holds otherwise, each read once; those are
    removed, to be sent again. `on_file(done, total)` after each file (progress)."""
    wrong = []
    for done, entry in enumerate(manifest.files, start=1):
        path = partial_file(run_id, step, entry.path)
        if not path.is_file() or path.stat().st_size != entry.size or _sha256(path) != entry.sha256:
            wrong.append(entry.path)
            path.unlink(missing_ok=True)
        on_file(done, len(manifest.files))
    return wrong


def publish_checkpoint(run_id: int, step: int, on_file: Callable[[int, int], None] | None = None) -> None:
    """Moves a checked upload into the artifact store. StoreUnavailable leaves the upload as it was."""
    artifact_store().publish(upload_folder(run_id, step), run_id, step, on_file)


def checkpoint_files(run_id: int, step: int) -> list[CheckpointFile]:
    """The files of the run's stored checkpoint of `step`; empty when the store lacks it."""
    return artifact_store().files(run_id, step)


def discard_partial_uploads(run_id: int) -> None:
    """Uploads the run's earlier attempt left unfinished. A resumed attempt writes its own
    checkpoint of the same step, which would otherwise be appended to the stale bytes, fail its
    checksum and be sent twice."""
    shutil.rmtree(run_root(run_id) / "uploads", ignore_errors=True)


def remove_run_artifacts(run_id: int) -> None:
    """The run's uploads in progress and its stored checkpoints. Runs after the delete has
    committed: a bucket that is away leaves its objects behind, said in the log, not a 500."""
    shutil.rmtree(run_root(run_id), ignore_errors=True)
    try:
        artifact_store().remove_run(run_id)
    except StoreUnavailable as exc:
        log.warning("run %s deleted, its checkpoints left in the store: %s", run_id, exc)


def _sha256(path: Path) -> str:
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def _gib(n: int) -> str:
    return f"{n / 1024 ** 3:.2f} GiB"
