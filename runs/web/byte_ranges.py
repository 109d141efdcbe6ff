"""HTTP Range (RFC 9110 §14) for the downloads: which bytes a request asks for, and whether its
If-Range still names the bytes this server would send.

One range only (`bytes=N-`, `bytes=N-M`, `bytes=-N`): what `curl -C -`, browsers' download
managers and the worker's own fetches send. A Range header this server does not take (several
ranges, another unit, a malformed one, digits other than ASCII's, a last byte before the first)
is ignored, as the RFC lets a server do: the whole file follows with 200, which a client resuming
checks by its status. A range that starts past the end, however many digits it has, is
unsatisfiable (416); an end past the end is the end.
"""
import re
from dataclasses import dataclass

from django.utils.http import parse_http_date_safe

SINGLE_RANGE = re.compile(r"^bytes=([0-9]*)-([0-9]*)$", re.ASCII)
# Past any file's size: a longer number is read as this, not converted (Python refuses to turn
# more than 4300 digits into an int, and nothing needs it to).
BEYOND_ANY_SIZE = 10 ** 20


class Unsatisfiable(Exception):
    """The range asks for no byte of the file (it starts at or past its end)."""


@dataclass(frozen=True)
class ByteRange:
    start: int
    end: int  # inclusive, as Content-Range has it

    @property
    def length(self) -> int:
        return self.end - self.start + 1

    def content_range(self, size: int) -> str:
        return f"bytes {self.start}-{self.end}/{size}"


def requested_range(header: str | None, size: int) -> ByteRange | None:
    """The one range `header` asks of a file of `size` bytes; None for the whole file (no header,
    or one not taken, see above); Unsatisfiable when no byte of it is in the file."""
    match = SINGLE_RANGE.match((header or "").replace(" ", ""))
    if match is None or match.groups() == ("", ""):
        return None
    first, last = (_number(digits) for digits in match.groups())
    if first is None:  # the last N bytes
        assert last is not None  # "bytes=-" was left out above
        if last == 0 or size == 0:
            raise Unsatisfiable
        return ByteRange(max(size - last, 0), size - 1)
    if last is not None and last < first:
        return None  # invalid: ignored
    if first >= size:
        raise Unsatisfiable
    return ByteRange(first, min(last, size - 1) if last is not None else size - 1)


def _number(digits: str) -> int | None:
    if not digits:
        return None
    significant = digits.lstrip("0") or "0"
    return int(significant) if len(significant) < 20 else BEYOND_ANY_SIZE


def same_bytes(if_range: str | None, etag: str, last_modified: int | None) -> bool:
    """Whether a Range may be honoured: no If-Range, or one that names these very bytes (our strong
    ETag, or the Last-Modified date exactly). Otherwise the file changed since the client's part
    was fetched, and it gets the whole new file instead of a mix of both."""
    if not if_range:
        return True
    if_range = if_range.strip()
    if if_range.startswith(('"', 'W/"')):
        return if_range == etag  # a weak tag never matches (strong comparison)
    date = parse_http_date_safe(if_range)
    return date is not None and last_modified is not None and date == last_modified
