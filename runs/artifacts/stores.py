"""Where whole checkpoints are kept: the filesystem under ARTIFACTS_DIR, or an S3-compatible bucket.

`ARTIFACT_STORE_URL` picks the store (empty: the filesystem; `s3://bucket/prefix`: a bucket).
Both keep a checkpoint at `runs/<run id>/checkpoints/step-<step>/` and answer the same three
questions, so the upload, download, resume and export code does not know which one it talks to.
"""
import shutil
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Protocol
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from runs.artifacts.checkpoint_files import CheckpointFile, folder_files
from runs.artifacts.store_layout import StoreUnavailable, checkpoint_key, run_key, step_folder

# Callers take the layout and the error from here, beside artifact_store(); they live in
# store_layout.py, which the bucket's store imports too.
__all__ = ["ArtifactStore", "FilesystemStore", "StoreUnavailable", "artifact_store", "checkpoint_key", "run_key",
           "step_folder"]


class ArtifactStore(Protocol):
    location: str  # where checkpoints are kept, for people

    def publish(self, staged: Path, run_id: int, step: int, on_file: Callable[[int, int], None] | None = None) -> None:
        """Moves a checked upload folder in as the step's checkpoint, replacing an older one;
        `on_file(done, total)` after each file where that takes a while (progress)."""

    def files(self, run_id: int, step: int) -> list[CheckpointFile]:
        """The checkpoint's files, sorted by path; empty when the store does not hold it."""

    def remove_run(self, run_id: int) -> None:
        """Everything kept for the run."""


class FilesystemStore:
    def __init__(self, root: Path):
        self.root = Path(root)
        self.location = str(self.root)

    def folder(self, run_id: int, step: int) -> Path:
        return self.root / checkpoint_key(run_id, step)

    def publish(self, staged: Path, run_id: int, step: int, on_file=None) -> None:
        final = self.folder(run_id, step)
        final.parent.mkdir(parents=True, exist_ok=True)
        if final.exists():
            shutil.rmtree(final)
        staged.rename(final)  # one rename: never half there

    def files(self, run_id: int, step: int) -> list[CheckpointFile]:
        folder = self.folder(run_id, step)
        return folder_files(folder) if folder.is_dir() else []

    def remove_run(self, run_id: int) -> None:
        shutil.rmtree(self.root / run_key(run_id), ignore_errors=True)


def artifact_store() -> ArtifactStore:
    """The store the settings name (built once per setting values)."""
    return _store_for(settings.ARTIFACT_STORE_URL, settings.ARTIFACT_STORE_ENDPOINT_URL,
                      settings.ARTIFACT_STORE_REGION, str(settings.ARTIFACTS_DIR))


@cache
def _store_for(url: str, endpoint_url: str, region: str, artifacts_dir: str) -> ArtifactStore:
    if not url:
        return FilesystemStore(Path(artifacts_dir))
    parts = urlsplit(url)
    if parts.scheme != "s3" or not parts.netloc:
        raise ImproperlyConfigured(f"ARTIFACT_STORE_URL={url!r}: expected s3://bucket or s3://bucket/prefix")
    from runs.artifacts.s3_store import S3Store  # boto3 loads only where a bucket is used

    return S3Store(parts.netloc, parts.path.strip("/"), endpoint_url or None, region)
