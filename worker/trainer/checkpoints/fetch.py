"""The checkpoint a resumed run continues from (or a new run starts from), fetched when this
worker did not write it.

The control plane keeps uploaded checkpoints (uploader.py); a worker that
resumes a run another worker trained downloads the checkpoint's tar with the run's token into
its own output folder, unpacks it through a partial folder, checks every file against the
manifest the tar carries beside the folder (the sizes and sha256s the control plane checked the
upload against), and resumes from there. A file that differs is fetched once more, then fails
the run naming it. While the control plane is away the fetch waits (reporting/fetching.py); a connection cut
mid-download goes on from the bytes already here (fetching.Download: HTTP Range).
"""
import logging
import shutil
import tarfile
import tempfile
from collections.abc import Callable
from pathlib import Path

from pydantic import ValidationError

from worker.trainer.checkpoints.manifest import ARCHIVE_MANIFEST, CheckpointManifest, files_in
from worker.trainer.reporting.fetching import (PATIENCE, Download, FetchError, Patience, WrongBytes, sha256_of,
                                     with_retries)

log = logging.getLogger(__name__)


class CheckpointFetchError(FetchError):
    """The checkpoint to resume from could not be had; the message says why."""


def local_checkpoint(resume_from: str, url: str | None, token: str | None, output_dir: Path,
                     patience: Patience = PATIENCE,
                     on_wait: Callable[[str], None] | None = None, folder: str = "checkpoints") -> tuple[str, bool]:
    """The checkpoint folder on this disk, and whether it was fetched (into output_dir/`folder`:
    a checkpoint to start from goes beside the run's own, not among them). While the control
    plane is away it is tried again for up to `patience.window_s`, each wait said through
    `on_wait` (else logged: the worker forwards the trainer's warnings to the run's log)."""
    if Path(resume_from).is_dir() or not url:
        return resume_from, False
    target = Path(output_dir) / folder / Path(resume_from).name
    if target.is_dir():
        return str(target), False
    say = on_wait or log.warning
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkdtemp(prefix=f"{target.name}.", suffix=".partial", dir=target.parent))
    try:
        download = Download(url, token, partial / "checkpoint.tar", "checkpoint", refused=CheckpointFetchError,
                            say=say)
        with_retries(lambda: fetch_into(download, target, say), url, "checkpoint", patience,
                     refused=CheckpointFetchError, on_wait=on_wait)
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return str(target), True


def fetch_into(download: Download, target: Path, say: Callable[[str], None] = log.warning) -> None:
    """Completes the download of one checkpoint folder's tar (going on from the bytes it kept),
    checks it, and unpacks it as `target`; an archive that arrived wrong is discarded, to be
    fetched whole again."""
    download.fetch()
    unpacked = download.target.with_name("unpacked")
    shutil.rmtree(unpacked, ignore_errors=True)  # what an earlier try unpacked
    try:
        folder = unpack_checked(download.target, unpacked, target.name, say)
    except WrongBytes:
        download.discard()
        raise
    folder.rename(target)


def unpack_checked(archive: Path, unpacked: Path, name: str, say: Callable[[str], None]) -> Path:
    """The checkpoint folder unpacked from `archive`, its files checked against the manifest beside it."""
    try:
        with tarfile.open(archive) as tar:
            tar.extractall(unpacked, filter="data")  # no paths outside, no links out
    except tarfile.TarError as exc:
        raise WrongBytes(f"the archive arrived broken: {exc}") from exc
    folders = [path for path in unpacked.iterdir() if path.is_dir()] if unpacked.is_dir() else []
    if len(folders) != 1:
        raise WrongBytes(f"the archive holds {len(folders)} folders, not one checkpoint")
    manifest_path = unpacked / ARCHIVE_MANIFEST
    if manifest_path.is_file():
        check_files(folders[0], read_manifest(manifest_path))
    else:
        say(f"the control plane kept no checksums for the checkpoint {name} (uploaded before it kept "
            "them): its files are not checked")
    return folders[0]


def read_manifest(path: Path) -> CheckpointManifest:
    try:
        return CheckpointManifest.model_validate_json(path.read_bytes())
    except ValidationError as exc:
        raise WrongBytes(f"the archive's {ARCHIVE_MANIFEST} is not a manifest: {exc}") from exc


def check_files(folder: Path, manifest: CheckpointManifest) -> None:
    """WrongBytes naming each file that is missing, extra, or not of the manifest's size and sha256."""
    expected = {entry.path: entry for entry in manifest.files}
    found = set(files_in(folder))
    problems = []
    for path in sorted(expected.keys() | found):
        entry, file = expected.get(path), folder / path
        if entry is None:
            problems.append(f"{path} (not in the manifest)")
        elif path not in found:
            problems.append(f"{path} (missing)")
        elif (size := file.stat().st_size) != entry.size:
            problems.append(f"{path} ({size} bytes, the manifest says {entry.size})")
        elif (digest := sha256_of(file)) != entry.sha256:
            problems.append(f"{path} (sha256 {digest}, the manifest says {entry.sha256})")
    if problems:
        raise WrongBytes(f"{len(problems)} file(s) of the checkpoint not as the control plane's manifest says: "
                         + "; ".join(problems[:5]))
