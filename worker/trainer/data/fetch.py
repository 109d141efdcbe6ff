"""An uploaded dataset's file on the worker: the control plane's own file where this machine
shares its disk, else fetched over HTTP with the run's token.

What is fetched is streamed to a partial file (going on where a broken connection stopped:
fetching.Download), checked against the sha256 the launch spec carries, and kept under
DATA_DIR/cache/datasets by that checksum, so a later run on the same data (on this worker) reads
it from there. Nothing unchecked is ever read as a dataset.
"""
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from worker.trainer.reporting.fetching import (PATIENCE, Download, FetchError, Patience, WrongBytes, sha256_of,
                                     with_retries)
from worker.trainer.models.paths import data_dir
from worker.trainer.spec import DatasetSpec


class DatasetFetchError(FetchError):
    """The dataset's file could not be had; the message says why."""


@dataclass(frozen=True)
class DatasetFile:
    path: Path
    source: str  # "shared disk", "cache" or "fetched"
    seconds: float = 0.0

    def describe(self) -> str:
        size = self.path.stat().st_size / 2 ** 20
        if self.source == "fetched":
            return f"dataset fetched from the control plane: {size:.1f} MB in {self.seconds:.1f} s, checksum verified"
        return f"dataset read from the {self.source}: {size:.1f} MB"


def dataset_cache_dir() -> Path:
    return data_dir() / "cache" / "datasets"


def dataset_file(spec: DatasetSpec, token: str | None, cache_dir: Path | None = None,
                 patience: Patience = PATIENCE, on_wait: Callable[[str], None] | None = None) -> DatasetFile:
    """The file of an uploaded dataset (spec.kind "file") on this machine. While the control plane
    is away it is tried again for up to `patience.window_s`, each wait said through `on_wait`
    (reporting/fetching.py); a refusal, a file gone from the control plane among them, fails at once."""
    shared = Path(spec.path) if spec.path else None
    if shared is not None and shared.is_file() and (spec.sha256 is None or sha256_of(shared) == spec.sha256):
        return DatasetFile(shared, "shared disk")
    if not spec.url or not spec.sha256:
        raise DatasetFetchError(f"dataset file {spec.path} is not on this machine, and the launch spec names no "
                                "URL and checksum to fetch it with")
    sha256 = spec.sha256
    cached = (cache_dir or dataset_cache_dir()) / f"{sha256}.{spec.format or 'data'}"
    if cached.is_file():
        return DatasetFile(cached, "cache")
    started = time.perf_counter()
    cached.parent.mkdir(parents=True, exist_ok=True)
    download = Download(spec.url, token, cached.with_name(f"{cached.name}.{time.time_ns()}.partial"), "dataset",
                        refused=DatasetFetchError, say=on_wait)
    try:
        with_retries(lambda: fetch_checked(download, cached, sha256), spec.url, "dataset", patience,
                     refused=DatasetFetchError, on_wait=on_wait)
    finally:
        download.target.unlink(missing_ok=True)
    return DatasetFile(cached, "fetched", time.perf_counter() - started)


def fetch_checked(download: Download, target: Path, sha256: str) -> None:
    """Completes the download (going on from the bytes it kept) and renames it as `target` only once
    its checksum matches; bytes that differ are discarded, so a second try fetches them whole."""
    download.fetch()
    if (digest := sha256_of(download.target)) != sha256:
        download.discard()
        raise WrongBytes(f"checksum mismatch: expected {sha256}, got {digest}")
    download.target.rename(target)
