"""A download that survives a broken connection: the bytes go to `<file>.part`, the server's
ETag to `<file>.part.etag`; the next try asks for the rest with Range and If-Range, so the part
is kept only while the server still sends those very bytes (else it answers 200 with the whole
download, and the part starts again). The file takes its name once whole.
"""
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from client.session import answer_of

Progress = Callable[[int, int | None], None]  # (bytes so far, total or None)


@dataclass(frozen=True)
class Downloaded:
    path: Path
    size: int
    resumed_from: int  # bytes of an earlier try kept (0: from the start)


def partial_of(dest: Path) -> tuple[Path, Path]:
    return dest.with_name(dest.name + ".part"), dest.with_name(dest.name + ".part.etag")


def download(http: httpx.Client, url: str, dest: Path, params: dict[str, Any] | None = None,
             progress: Progress | None = None) -> Downloaded:
    """GETs `url` into `dest`, going on from a part an earlier try left; ApiError when refused."""
    part, etag_file = partial_of(dest)
    kept = part.stat().st_size if part.exists() and etag_file.exists() else 0
    headers = {"Range": f"bytes={kept}-", "If-Range": etag_file.read_text().strip()} if kept else {}
    # A redirect (a bucket's presigned URL) is followed; httpx drops the token on leaving this origin.
    with http.stream("GET", url, params=params, headers=headers, follow_redirects=True,
                     timeout=httpx.Timeout(30.0, read=300.0)) as answer:
        if answer.status_code == 416 and kept and whole_size(answer) == kept:
            return finish(part, etag_file, dest, kept, kept)
        if not answer.is_success:
            answer.read()
            answer_of(answer)  # raises ApiError with the server's words
        start = kept if answer.status_code == 206 else 0
        total = whole_size(answer)
        if answer.headers.get("ETag"):
            etag_file.write_text(answer.headers["ETag"])
        with part.open("r+b" if start else "wb") as out:
            out.seek(start)
            out.truncate()
            done = start
            for chunk in answer.iter_bytes():  # as they arrive: a break loses nothing that came
                out.write(chunk)
                done += len(chunk)
                if progress:
                    progress(done, total)
    return finish(part, etag_file, dest, done, start)


def whole_size(answer: httpx.Response) -> int | None:
    """The whole download's size: after the slash of Content-Range, else Content-Length."""
    if (content_range := answer.headers.get("Content-Range", "")).rpartition("/")[2].isdigit():
        return int(content_range.rpartition("/")[2])
    length = answer.headers.get("Content-Length", "")
    return int(length) if length.isdigit() else None


def finish(part: Path, etag_file: Path, dest: Path, size: int, resumed_from: int) -> Downloaded:
    part.replace(dest)
    etag_file.unlink(missing_ok=True)
    return Downloaded(dest, size, resumed_from)
