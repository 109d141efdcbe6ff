"""A checkpoint download with httpx's mock transport standing in for the server: a part whose bytes
the server no longer sends starts again, a part already whole is finished without a byte, and a
connection that breaks midway keeps what arrived for the next try, exiting 4 with one line."""
import httpx

from client.api import ControlPlane
from client.cli import main

WHOLE = bytes(range(256)) * 64
ETAG = '"v2"'
URL = "/api/runs/3/checkpoints/5/download/"


def server(request: httpx.Request) -> httpx.Response:
    """The download as pieces_response answers it: Range honoured only under the current ETag."""
    asked = request.headers.get("Range", "")
    start = int(asked.removeprefix("bytes=").rstrip("-")) if asked else 0
    if not asked or request.headers.get("If-Range") != ETAG:
        return httpx.Response(200, content=WHOLE, headers={"ETag": ETAG})
    if start >= len(WHOLE):
        return httpx.Response(416, headers={"Content-Range": f"bytes */{len(WHOLE)}", "ETag": ETAG})
    return httpx.Response(206, content=WHOLE[start:], headers={
        "ETag": ETAG, "Content-Range": f"bytes {start}-{len(WHOLE) - 1}/{len(WHOLE)}"})


def grpo(capsys, transport, *argv) -> tuple[int, str, str]:
    code = main(list(argv), api=ControlPlane("http://127.0.0.1:9", "token", transport=transport))
    out, err = capsys.readouterr()
    return code, out, err


def leave_part(tmp_path, data: bytes, etag: str):
    (tmp_path / "c.tar.part").write_bytes(data)
    (tmp_path / "c.tar.part.etag").write_text(etag)


def test_a_part_of_other_bytes_is_replaced_by_the_whole_download(tmp_path):
    leave_part(tmp_path, b"stale bytes of an older tar", '"v1"')
    done = ControlPlane("http://127.0.0.1:9", "t", transport=httpx.MockTransport(server)).download_checkpoint(
        3, 5, tmp_path / "c.tar")
    assert (done.resumed_from, (tmp_path / "c.tar").read_bytes()) == (0, WHOLE)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.tar"]


def test_a_part_already_whole_is_finished_without_sending_it_again(tmp_path):
    leave_part(tmp_path, WHOLE, ETAG)
    done = ControlPlane("http://127.0.0.1:9", "t", transport=httpx.MockTransport(server)).download_checkpoint(
        3, 5, tmp_path / "c.tar")
    assert (done.size, done.resumed_from, (tmp_path / "c.tar").read_bytes()) == (len(WHOLE), len(WHOLE), WHOLE)


class BreaksMidway(httpx.SyncByteStream):
    def __iter__(self):
        yield WHOLE[:1000]
        raise httpx.ReadError("connection reset by peer")


def test_a_broken_download_keeps_what_arrived_and_the_same_command_goes_on(tmp_path, capsys):
    def breaking(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, stream=BreaksMidway(), headers={"ETag": ETAG, "Content-Length": str(len(WHOLE))})

    argv = ("checkpoints", "download", "3", "5", "-o", str(tmp_path / "c.tar"))
    code, out, err = grpo(capsys, httpx.MockTransport(breaking), *argv)
    assert code == 4 and out == "" and "the download broke (connection reset by peer)" in err
    assert f"kept in {tmp_path / 'c.tar.part'}: run the same command again" in err
    assert (tmp_path / "c.tar.part").read_bytes() == WHOLE[:1000]
    code, out, err = grpo(capsys, httpx.MockTransport(server), *argv, "--json")
    assert code == 0 and '"resumed_from": 1000' in out
    assert (tmp_path / "c.tar").read_bytes() == WHOLE


def test_a_refused_download_exits_1_with_the_servers_reason(tmp_path, capsys):
    def missing(request: httpx.Request) -> httpx.Response:
        return httpx.Response(404, json={"detail": "this checkpoint's files are no longer on disk"})

    code, out, err = grpo(capsys, httpx.MockTransport(missing), "checkpoints", "download", "3", "5",
                          "-o", str(tmp_path / "c.tar"))
    assert (code, out) == (1, "") and err.strip() == "refused: HTTP 404: this checkpoint's files are no longer on disk"
    assert not list(tmp_path.iterdir())
