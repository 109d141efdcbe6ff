"""The big bytes of bench/load.py's load: a synthetic checkpoint, users downloading it (one of them
cut off half-way and resuming with Range), workers uploading it through the real uploader, and
the local disk copy the downloads are compared with.

The checkpoint's large files are sparse (`truncate`): reading them costs no disk, writing what
was read costs as much as any file's bytes, on both sides of the comparison.
"""
import hashlib
import os
import shutil
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from worker.trainer.checkpoints.manifest import files_in

READ = 8 * 1024 * 1024


def make_checkpoint(folder: Path, size_bytes: int) -> Path:
    """A checkpoint folder of about `size_bytes`: weights a third, optimizer state the rest, sparse."""
    (folder / "optimizer").mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text('{"model_type": "llama", "hidden_size": 4096}\n')
    (folder / "tokenizer.json").write_text('{"version": "1.0", "model": {"type": "BPE"}}\n')
    (folder / "trainer_state.pt").write_bytes(os.urandom(4096))
    with (folder / "model.safetensors").open("wb") as weights:
        weights.truncate(size_bytes // 3)
    with (folder / "optimizer" / "optimizer.pt").open("wb") as state:
        state.truncate(size_bytes - size_bytes // 3)
    return folder


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(READ):
            digest.update(chunk)
    return digest.hexdigest()


def manifest_of(folder: Path) -> list[dict]:
    """Each file's path, size and sha256, as the uploader's manifest gives them."""
    return [{"path": relative, "size": (folder / relative).stat().st_size, "sha256": file_sha256(folder / relative)}
            for relative in files_in(folder)]


def local_copy_s(source: Path, target: Path) -> float:
    """Seconds to copy the folder's files on this disk (the peer of a download); the copy is removed."""
    started = time.perf_counter()
    shutil.copytree(source, target)
    seconds = time.perf_counter() - started
    shutil.rmtree(target)
    return seconds


@dataclass
class Download:
    """One user's download of the checkpoint to a file (removed once hashed)."""
    bytes: int = 0
    seconds: float = 0.0
    sha256: str = ""
    resumed: str = ""  # for the cut-off one: how the resume went
    error: str = ""
    started: float = 0.0
    ended: float = 0.0


def _fetch_into(client: httpx.Client, url: str, handle, headers: dict, stop_after: int | None) -> httpx.Response:
    """Writes the answer's body to `handle`, stopping (closing the connection) past `stop_after` bytes."""
    with client.stream("GET", url, headers=headers) as answer:
        if answer.status_code not in (200, 206):
            answer.read()
            return answer
        for chunk in answer.iter_bytes(READ):
            handle.write(chunk)
            if stop_after is not None and handle.tell() >= stop_after:
                break
        return answer


def download(base_url: str, cookies: dict, path: str, target: Path, cut_at: int | None) -> Download:
    """GET `path` into `target`; with `cut_at`, cut the connection once that many bytes arrived, then
    ask for the rest with `Range: bytes=N-` (and `If-Range`, the first answer's validator) and append."""
    result = Download(started=time.perf_counter())
    try:
        with httpx.Client(base_url=base_url, cookies=cookies, timeout=120) as client, target.open("wb") as handle:
            first = _fetch_into(client, path, handle, {}, cut_at)
            if first.status_code != 200:
                result.error = f"HTTP {first.status_code}: {first.text[:200]}"
            elif cut_at is not None:
                result.resumed = _resume(client, path, handle, first)
        result.ended = time.perf_counter()
        result.seconds, result.bytes = result.ended - result.started, target.stat().st_size
        result.sha256 = file_sha256(target)
    except httpx.HTTPError as exc:
        result.error, result.ended = f"{type(exc).__name__}: {exc}", time.perf_counter()
    finally:
        target.unlink(missing_ok=True)
    return result


def _resume(client: httpx.Client, path: str, handle, first: httpx.Response) -> str:
    """The rest from where the file ends, as `curl -C -` asks; an answer other than 206 is not written."""
    handle.flush()
    have = handle.tell()
    headers = {"Range": f"bytes={have}-"}
    if validator := first.headers.get("ETag") or first.headers.get("Last-Modified"):
        headers["If-Range"] = validator
    with client.stream("GET", path, headers=headers) as rest:
        if rest.status_code != 206:
            return f"HTTP {rest.status_code} to a Range request: not resumed"
        if not rest.headers.get("Content-Range", "").startswith(f"bytes {have}-"):
            return f"206 with Content-Range {rest.headers.get('Content-Range')!r}, not from byte {have}"
        for chunk in rest.iter_bytes(READ):
            handle.write(chunk)
    return f"206 from byte {have:,}"


@dataclass
class Upload:
    seconds: float = 0.0
    listed: bool = False
    said: list[str] = field(default_factory=list)


def upload(uploads_url: str, token: str, folder: Path, step: int, timeout_s: float) -> Upload:
    """The worker's own uploader, from submit until it reports the checkpoint listed."""
    from worker.trainer.checkpoints.uploader import CheckpointUploader

    result, done = Upload(), threading.Event()
    uploader = CheckpointUploader(uploads_url, token, on_uploaded=lambda job: done.set(),
                                  say=lambda level, message: result.said.append(f"{level}: {message}"))
    started = time.perf_counter()
    uploader.submit(folder, step, step)
    uploader.close(timeout_s=timeout_s)
    result.seconds, result.listed = time.perf_counter() - started, done.is_set()
    return result
