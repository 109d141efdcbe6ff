"""The download answer for each kind of request, without a server: whole (200), a range (206),
past the end (416), an If-Range for other bytes (200), a HEAD that reads no file."""
import io
from pathlib import PurePosixPath

import pytest
from django.test import RequestFactory

from runs.web.file_responses import PiecesResponse, layout_etag, pieces_response
from runs.artifacts.checkpoint_files import CheckpointFile
from runs.artifacts.pieces import literal, of_file

DATA = bytes(range(256)) * 8


def stored(data: bytes = DATA) -> CheckpointFile:
    return CheckpointFile(PurePosixPath("f.bin"), len(data), 1_700_000_000.0, lambda: io.BytesIO(data))


def unreadable() -> CheckpointFile:
    def refuse():
        raise AssertionError("a HEAD must not open the file")
    return CheckpointFile(PurePosixPath("f.bin"), len(DATA), 1_700_000_000.0, refuse)


def answer(method: str = "get", file: CheckpointFile | None = None, **headers):
    pieces = [literal(b"head"), of_file(file or stored())]
    request = getattr(RequestFactory(), method)("/download", **headers)
    return pieces_response(request, pieces, etag=layout_etag(pieces), last_modified=1_700_000_000.0,
                           content_type="application/octet-stream", filename="f.bin"), pieces


def body(response) -> bytes:
    return b"".join(response.streaming_content)


def test_a_plain_get_is_the_whole_with_what_a_resume_needs():
    response, pieces = answer()
    assert response.status_code == 200 and body(response) == b"head" + DATA
    assert response["Content-Length"] == str(4 + len(DATA)) and response["Accept-Ranges"] == "bytes"
    assert response["ETag"] == layout_etag(pieces) and response["Last-Modified"].endswith("GMT")
    assert 'filename="f.bin"' in response["Content-Disposition"] and isinstance(response, PiecesResponse)


def test_a_range_is_a_206_of_those_bytes():
    response, _ = answer(HTTP_RANGE="bytes=2-9")
    assert response.status_code == 206 and body(response) == (b"head" + DATA)[2:10]
    assert response["Content-Range"] == f"bytes 2-9/{4 + len(DATA)}" and response["Content-Length"] == "8"


def test_a_range_past_the_end_is_a_416_with_the_length():
    response, _ = answer(HTTP_RANGE=f"bytes={4 + len(DATA)}-")
    assert response.status_code == 416 and response["Content-Range"] == f"bytes */{4 + len(DATA)}"


@pytest.mark.parametrize("if_range, status", [('"other"', 200), ("Tue, 14 Nov 2023 22:13:19 GMT", 200),
                                              ("Tue, 14 Nov 2023 22:13:20 GMT", 206)])
def test_if_range_gets_the_range_only_for_the_same_bytes(if_range, status):
    response, _ = answer(HTTP_RANGE="bytes=2-9", HTTP_IF_RANGE=if_range)
    assert response.status_code == status


def test_if_range_with_the_etag_gets_the_range():
    first, pieces = answer()
    response, _ = answer(HTTP_RANGE="bytes=2-", HTTP_IF_RANGE=first["ETag"])
    assert response.status_code == 206 and body(response) == (b"head" + DATA)[2:]


def test_a_head_says_the_length_and_reads_no_file():
    response, _ = answer("head", file=unreadable())
    assert response.status_code == 200 and response["Content-Length"] == str(4 + len(DATA)) and body(response) == b""


async def test_under_asgi_the_bytes_come_from_the_asynchronous_iterator():
    response, _ = answer(HTTP_RANGE="bytes=100-")
    chunks = [chunk async for chunk in response]
    assert b"".join(chunks) == (b"head" + DATA)[100:]
