"""An uploaded dataset's file on the worker: the control plane's own file where this machine
shares its disk, else fetched over HTTP with the run's token.

What is fetched is streamed to a partial file, checked against the sha256 the launch spec
carries, and kept under DATA_DIR/cache/datasets by that checksum, so a later run on the same
data (on this worker) reads it from there. Nothing unchecked is ever read as a dataset.
"""
import hashlib
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

from worker.trainer.models.paths import data_dir
from worker.trainer.spec import DatasetSpec

CHUNK = 1024 * 1024


class DatasetFetchError(ValueError):
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


def sha256_of(path: Path) -> str:
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def dataset_file(spec: DatasetSpec, token: str | None, cache_dir: Path | None = None,
                 attempts: int = 3, backoff_s: float = 1.0) -> DatasetFile:
    """The file of an uploaded dataset (spec.kind "file") on this machine."""
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
    for attempt in range(1, attempts + 1):
        try:
            download(spec.url, token, cached, spec.sha256)
            return DatasetFile(cached, "fetched", time.perf_counter() - started)
        except RetryableFetchError as exc:
            if attempt == attempts:
                raise DatasetFetchError(f"dataset not fetched from {spec.url} after {attempts} tries: {exc}") from exc
            time.sleep(backoff_s * attempt)
    raise AssertionError("unreachable")


class RetryableFetchError(Exception):
    """A fetch that may succeed when tried again: the server away, a broken stream, a bad checksum."""


def download(url: str, token: str | None, target: Path, sha256: str) -> None:
    """Streams `url` to `target` through a partial file, renamed only once its checksum matches."""
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f"{target.name}.{time.time_ns()}.partial")
    digest = hashlib.sha256()
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        with httpx.stream("GET", url, headers=headers, timeout=60, follow_redirects=True) as response:
            refuse_unless_ok(response, url)
            with partial.open("wb") as out:
                for chunk in response.iter_bytes(CHUNK):
                    digest.update(chunk)
                    out.write(chunk)
        if digest.hexdigest() != sha256:
            raise RetryableFetchError(f"checksum mismatch: expected {sha256}, got {digest.hexdigest()}")
        partial.rename(target)
    except httpx.TransportError as exc:
        raise RetryableFetchError(f"the control plane did not answer: {exc}") from exc
    finally:
        partial.unlink(missing_ok=True)


def refuse_unless_ok(response: httpx.Response, url: str) -> None:
    if response.status_code == 200:
        return
    response.read()
    if response.status_code >= 500:
        raise RetryableFetchError(f"HTTP {response.status_code} from {url}")
    try:
        detail = response.json().get("detail", response.text)
    except ValueError:
        detail = response.text
    raise DatasetFetchError(f"the control plane refused the dataset (HTTP {response.status_code}): {detail[:300]}")
