"""The checkpoint a resumed run continues from, fetched when this worker did not write it.

The control plane keeps uploaded checkpoints (reporting/checkpoint_uploader.py); a worker that
resumes a run another worker trained downloads the checkpoint's tar with the run's token into
its own output folder, unpacks it through a partial folder, and resumes from there.
"""
import shutil
import tarfile
import tempfile
from collections.abc import Callable
from pathlib import Path

from worker.trainer.fetching import PATIENCE, FetchError, Patience, WrongBytes, stream_to_file, with_retries


class CheckpointFetchError(FetchError):
    """The checkpoint to resume from could not be had; the message says why."""


def local_checkpoint(resume_from: str, url: str | None, token: str | None, output_dir: Path,
                     patience: Patience = PATIENCE,
                     on_wait: Callable[[str], None] | None = None) -> tuple[str, bool]:
    """The checkpoint folder on this disk, and whether it was fetched. While the control plane is
    away it is tried again for up to `patience.window_s`, each wait said through `on_wait`
    (else logged: the worker forwards the trainer's warnings to the run's log)."""
    if Path(resume_from).is_dir() or not url:
        return resume_from, False
    target = Path(output_dir) / "checkpoints" / Path(resume_from).name
    if target.is_dir():
        return str(target), False
    with_retries(lambda: fetch_into(url, token, target), url, "checkpoint", patience,
                 refused=CheckpointFetchError, on_wait=on_wait)
    return str(target), True


def fetch_into(url: str, token: str | None, target: Path) -> None:
    """Downloads the tar of one checkpoint folder and unpacks it as `target`."""
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkdtemp(prefix=f"{target.name}.", suffix=".partial", dir=target.parent))
    try:
        archive = partial / "checkpoint.tar"
        stream_to_file(url, token, archive, "checkpoint", refused=CheckpointFetchError)
        try:
            with tarfile.open(archive) as tar:
                tar.extractall(partial / "unpacked", filter="data")  # no paths outside, no links out
        except tarfile.TarError as exc:
            raise WrongBytes(f"the archive arrived broken: {exc}") from exc
        (folder,) = (partial / "unpacked").iterdir()
        folder.rename(target)
    finally:
        shutil.rmtree(partial, ignore_errors=True)
