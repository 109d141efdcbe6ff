"""A download that survives a broken connection: the bytes go to `<file>.part`, the server's
validator (a strong ETag, else its date) to `<file>.part.etag`; the next try asks for the rest
with Range and If-Range, so the part is kept only while the server still sends those very bytes
(else it answers 200 with the whole download, and the part starts again). The file takes its
name once whole, and only when the bytes that arrived are as many as the server announced.
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


class DownloadBroken(Exception):
    """The bytes that arrived are not the download: a range other than the one asked, fewer or
    more bytes than the whole, a part the server no longer has. Nothing is renamed into place."""


def partial_of(dest: Path) -> tuple[Path, Path]:
    """The part an interrupted try left, and the validator (a strong ETag or a date) its bytes go by."""
    return dest.with_name(dest.name + ".part"), dest.with_name(dest.name + ".part.etag")


def resumable(dest: Path) -> bool:
    """Whether a next try goes on from what an earlier one left, rather than from the start."""
    part, validator_file = partial_of(dest)
    return part.exists() and validator_file.exists()


def download(http: httpx.Client, url: str, dest: Path, params: dict[str, Any] | None = None,
             progress: Progress | None = None) -> Downloaded:
    """GETs `url` into `dest`, going on from a part an earlier try left; ApiError when refused,
    DownloadBroken when what arrived is not the download."""
    part, validator_file = partial_of(dest)
    kept = part.stat().st_size if resumable(dest) else 0
    headers = {"Range": f"bytes={kept}-", "If-Range": validator_file.read_text().strip()} if kept else {}
    # A redirect (a bucket's presigned URL) is followed; httpx drops the token on leaving this origin.
    with http.stream("GET", url, params=params, headers=headers, follow_redirects=True,
                     timeout=httpx.Timeout(30.0, read=300.0)) as answer:
        if answer.status_code == 416 and kept:
            if answer.headers.get("Content-Range", "") == f"bytes */{kept}":
                return finish(part, validator_file, dest, kept, kept)  # every byte was already here
            discard(part, validator_file)
            raise DownloadBroken(f"the server holds fewer bytes than the {kept} kept in {part}: that part is "
                                 "removed; run the same command again to start over")
        if not answer.is_success:
            answer.read()
            answer_of(answer)  # raises ApiError with the server's words
        if answer.status_code == 206 and not answer.headers.get("Content-Range", "").startswith(f"bytes {kept}-"):
            raise DownloadBroken(f"the server answered a range other than bytes {kept}-: "
                                 f"{answer.headers.get('Content-Range')}")
        start = kept if answer.status_code == 206 else 0  # a 200: the whole again (it changed, or no ranges)
        total = whole_size(answer)
        keep_validator(answer, validator_file)
        done = write_part(answer, part, start, total, progress)
    if total is not None and done != total:
        raise DownloadBroken(f"{done} bytes arrived of the {total} the server announced; they are kept in "
                             f"{part}: run the same command again")
    return finish(part, validator_file, dest, done, start)


def write_part(answer: httpx.Response, part: Path, start: int, total: int | None,
               progress: Progress | None) -> int:
    with part.open("r+b" if start else "wb") as out:
        out.seek(start)
        out.truncate()
        done = start
        for chunk in answer.iter_bytes():  # as they arrive: a break loses nothing that came
            out.write(chunk)
            done += len(chunk)
            if progress:
                progress(done, total)
    return done


def keep_validator(answer: httpx.Response, validator_file: Path) -> None:
    """What an If-Range may name these bytes by: a strong ETag, else the Last-Modified date, and
    only where the server serves ranges; without one, a next try starts over."""
    etag = answer.headers.get("ETag", "")
    validator = etag if etag and not etag.startswith("W/") else answer.headers.get("Last-Modified", "")
    if validator and answer.headers.get("Accept-Ranges", "").lower() == "bytes":
        validator_file.write_text(validator)
    else:
        validator_file.unlink(missing_ok=True)


def whole_size(answer: httpx.Response) -> int | None:
    """The whole download's size: after the slash of Content-Range, else Content-Length."""
    if (content_range := answer.headers.get("Content-Range", "")).rpartition("/")[2].isdigit():
        return int(content_range.rpartition("/")[2])
    length = answer.headers.get("Content-Length", "")
    return int(length) if length.isdigit() else None


def discard(part: Path, validator_file: Path) -> None:
    part.unlink(missing_ok=True)
    validator_file.unlink(missing_ok=True)


def finish(part: Path, validator_file: Path, dest: Path, size: int, resumed_from: int) -> Downloaded:
    part.replace(dest)
    validator_file.unlink(missing_ok=True)
    return Downloaded(dest, size, resumed_from)
