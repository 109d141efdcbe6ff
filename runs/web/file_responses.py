"""Downloads of any size with bounded memory, resumable with HTTP Range.

`pieces_response` answers a GET for a download laid out as pieces (runs/artifacts/pieces.py: a
file, or a tar made on the fly): 200 with the whole of it, or 206 with the one range asked
(byte_ranges.py), or 416 when that range is past its end; always with Content-Length,
Accept-Ranges, a strong ETag and Last-Modified, so that `curl -C -` or the worker's fetch goes on
where a broken download stopped, and an If-Range tells a changed file from the one begun.

Why a response class of its own: under ASGI (uvicorn), Django reads a synchronous iterator
whole into memory before sending a byte (a 1.6 GB checkpoint grew the server by 1.6 GB), and
streams only an asynchronous one. Under WSGI or Django's test client it is the other way round.
PiecesResponse gives each server the iterator it streams.
"""
from contextlib import aclosing

from django.http import JsonResponse, StreamingHttpResponse
from django.utils.http import content_disposition_header, http_date
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse

from runs.artifacts.pieces import Piece, aiter_bytes, fingerprint, iter_bytes, total_size
from runs.web.byte_ranges import Unsatisfiable, requested_range, same_bytes

RANGE_PARAMETERS = [
    OpenApiParameter("Range", str, OpenApiParameter.HEADER, required=False, description=(
        "One byte range (bytes=N-, bytes=N-M or bytes=-N) to go on with a broken download; several ranges, "
        "or a malformed one, are ignored (200 with the whole download).")),
    OpenApiParameter("If-Range", str, OpenApiParameter.HEADER, required=False, description=(
        "The ETag (or Last-Modified) of the part already fetched: the range is honoured only if the download "
        "is still those bytes, else the whole new one comes with 200."))]


def range_responses(content_type: str, what: str) -> dict:
    """The answers pieces_response gives, for a view's schema."""
    return {(200, content_type): OpenApiResponse(OpenApiTypes.BINARY, description=(
                f"{what}, whole. Content-Length, Accept-Ranges: bytes, ETag and Last-Modified are given.")),
            (206, content_type): OpenApiResponse(OpenApiTypes.BINARY, description=(
                "The range asked for (Content-Range says where it lies in the whole).")),
            416: OpenApiResponse(description="The range asked for starts past the end (Content-Range: bytes */size).")}


class PiecesResponse(StreamingHttpResponse):
    """Bytes start..end of the pieces: read a chunk at a time, in a thread per chunk under ASGI."""

    def __init__(self, pieces: list[Piece], start: int, end: int, **kwargs):
        super().__init__(iter_bytes(pieces, start, end), **kwargs)
        self._span = (pieces, start, end)

    async def __aiter__(self):
        # Django's ASGI handler sends what this yields, one chunk after the other.
        async with aclosing(aiter_bytes(*self._span)) as chunks:
            async for chunk in chunks:
                yield chunk


def pieces_response(request, pieces: list[Piece], *, etag: str, last_modified: float | None,
                    content_type: str, filename: str) -> JsonResponse | PiecesResponse:
    """The download answer for `request` (its Range and If-Range headers), see the module's docstring."""
    size = total_size(pieces)
    modified = int(last_modified) if last_modified is not None else None
    headers = {"Accept-Ranges": "bytes", "ETag": etag}
    if modified is not None:
        headers["Last-Modified"] = http_date(modified)
    asked = request.META.get("HTTP_RANGE")
    try:
        wanted = requested_range(asked, size) if same_bytes(request.META.get("HTTP_IF_RANGE"), etag, modified) else None
    except Unsatisfiable:
        return JsonResponse({"detail": f"the range {_shown(asked)} asks for no byte of this download of {size} bytes"},
                            status=416, headers={**headers, "Content-Range": f"bytes */{size}"})
    headers["Content-Disposition"] = content_disposition_header(True, filename)
    if wanted is None:
        response = PiecesResponse(pieces, *_span(request, 0, size - 1), content_type=content_type, headers=headers)
        response["Content-Length"] = str(size)
        return response
    headers["Content-Range"] = wanted.content_range(size)
    response = PiecesResponse(pieces, *_span(request, wanted.start, wanted.end), status=206,
                              content_type=content_type, headers=headers)
    response["Content-Length"] = str(wanted.length)
    return response


def _shown(header: str, most: int = 100) -> str:
    """The Range header as the refusal quotes it: cut short, a header may be kilobytes of digits."""
    return repr(header if len(header) <= most else header[:most] + "...")


def _span(request, start: int, end: int) -> tuple[int, int]:
    """The bytes to read: none for a HEAD (the server sends no body, and reading 100 GB to drop it
    would cost as much as the download)."""
    return (0, -1) if request.method == "HEAD" else (start, end)


def layout_etag(pieces: list[Piece]) -> str:
    """A strong ETag for bytes laid out as `pieces`: it changes when a literal byte, or a file's
    path, size or modification time does."""
    return f'"{fingerprint(pieces)}"'
