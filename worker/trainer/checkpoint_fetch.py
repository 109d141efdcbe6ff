"""The checkpoint a resumed run continues from, fetched when this worker did not write it.

The control plane keeps uploaded checkpoints (reporting/checkpoint_uploader.py); a worker that
resumes a run another worker trained downloads the checkpoint's tar with the run's token into
its own output folder, unpacks it through a partial folder, and resumes from there.
"""
import shutil
import tarfile
import tempfile
import time
from pathlib import Path

import httpx

CHUNK = 1024 * 1024


class CheckpointFetchError(RuntimeError):
    """The checkpoint to resume from could not be had; the message says why."""


def local_checkpoint(resume_from: str, url: str | None, token: str | None, output_dir: Path,
                     attempts: int = 3, backoff_s: float = 2.0) -> tuple[str, bool]:
    """The checkpoint folder on this disk, and whether it was fetched."""
    if Path(resume_from).is_dir() or not url:
        return resume_from, False
    target = Path(output_dir) / "checkpoints" / Path(resume_from).name
    if target.is_dir():
        return str(target), False
    for attempt in range(1, attempts + 1):
        try:
            fetch_into(url, token, target)
            return str(target), True
        except (httpx.TransportError, tarfile.TarError) as exc:
            if attempt == attempts:
                raise CheckpointFetchError(f"checkpoint not fetched from {url} after {attempts} tries: {exc}") from exc
            time.sleep(backoff_s * attempt)
    raise AssertionError("unreachable")


def fetch_into(url: str, token: str | None, target: Path) -> None:
    """Downloads the tar of one checkpoint folder and unpacks it as `target`."""
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkdtemp(prefix=f"{target.name}.", suffix=".partial", dir=target.parent))
    try:
        archive = partial / "checkpoint.tar"
        with httpx.stream("GET", url, headers={"Authorization": f"Bearer {token}"} if token else {},
                          timeout=120) as response:
            if response.status_code != 200:
                response.read()
                raise CheckpointFetchError(f"the control plane refused the checkpoint (HTTP {response.status_code}): "
                                           f"{response.text[:300]}")
            with archive.open("wb") as out:
                for chunk in response.iter_bytes(CHUNK):
                    out.write(chunk)
        with tarfile.open(archive) as tar:
            tar.extractall(partial / "unpacked", filter="data")  # no paths outside, no links out
        (folder,) = (partial / "unpacked").iterdir()
        folder.rename(target)
    finally:
        shutil.rmtree(partial, ignore_errors=True)
