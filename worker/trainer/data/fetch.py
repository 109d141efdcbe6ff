"""An uploaded dataset's file on the worker: the control plane's own file where this machine
shares its disk, else fetched over HTTP with the run's token.

What is fetched is streamed to a partial file, checked against the sha256 the launch spec
carries, and kept under DATA_DIR/cache/datasets by that checksum, so a later run on the same
data (on this worker) reads it from there. Nothing unchecked is ever read as a dataset.
"""
import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from worker.trainer.fetching import (PATIENCE, FetchError, Patience, WrongBytes, sha256_of, stream_to_file,
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
    (fetching.py); a refusal, a file gone from the control plane among them, fails at once."""
    shared = Path(spec.path) if spec.path else None
    if shared is not None and shared.is_file() and (spec.sha256 is None or sha256_of(shared) == spec.sha256):
        return DatasetFile(shared, "shared disk")
    if not spec.url or not spec.sha256:
        raise DatasetFetchError(f"dataset file {spec.path} is not on this machine, and the launch spec names no "
                                "URL and checksum to fetch it with")
    cached = (cache_dir or dataset_cache_dir()) / f"{spec.sha256}.{spec.format or 'data'}"
    if cached.is_file():
        return DatasetFile(cached, "cache")
    started = time.perf_counter()
    with_retries(lambda: download(spec.url, token, cached, spec.sha256), spec.url, "dataset", patience,
                 refused=DatasetFetchError, on_wait=on_wait)
    return DatasetFile(cached, "fetched", time.perf_counter() - started)


def download(url: str, token: str | None, target: Path, sha256: str) -> None:
    """Streams `url` to `target` through a partial file, renamed only once its checksum matches."""
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f"{target.name}.{time.time_ns()}.partial")
    digest = hashlib.sha256()
    try:
        stream_to_file(url, token, partial, "dataset", on_chunk=digest.update, refused=DatasetFetchError)
        if digest.hexdigest() != sha256:
            raise WrongBytes(f"checksum mismatch: expected {sha256}, got {digest.hexdigest()}")
        partial.rename(target)
    finally:
        partial.unlink(missing_ok=True)
