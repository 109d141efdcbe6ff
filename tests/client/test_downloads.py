"""A checkpoint download with httpx's mock transport standing in for the server: a part whose bytes
the server no longer sends starts again, a part already whole is finished without a byte, and a
connection that breaks midway keeps what arrived for the next try, exiting 4 with one line."""
import httpx
import pytest

from client.api import ControlPlane
from client.cli.main import main
from client.downloads import DownloadBroken

WHOLE = bytes(range(256)) * 64
ETAG = '"v2"'
URL = "/api/runs/3/checkpoints/5/download/"


def server(request: httpx.Request) -> httpx.Response:
    """The download as pieces_response answers it: Range honoured only under the current ETag."""
    served = {"ETag": ETAG, "Accept-Ranges": "bytes"}
    asked = request.headers.get("Range", "")
    start = int(asked.removeprefix("bytes=").rstrip("-")) if asked else 0
    if not asked or request.headers.get("If-Range") != ETAG:
        return httpx.Response(200, content=WHOLE, headers=served)
    if start >= len(WHOLE):
        return httpx.Response(416, headers={"Content-Range": f"bytes */{len(WHOLE)}", **served})
    return httpx.Response(206, content=WHOLE[start:], headers={
        **served, "Content-Range": f"bytes {start}-{len(WHOLE) - 1}/{len(WHOLE)}"})


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
        return httpx.Response(200, stream=BreaksMidway(), headers={"ETag": ETAG, "Accept-Ranges": "bytes",
                                                                   "Content-Length": str(len(WHOLE))})

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


def test_a_range_other_than_the_one_asked_is_refused_and_nothing_is_renamed(tmp_path):
    leave_part(tmp_path, WHOLE[:10], ETAG)

    def from_the_start(request: httpx.Request) -> httpx.Response:
        return httpx.Response(206, content=WHOLE, headers={
            "ETag": ETAG, "Accept-Ranges": "bytes", "Content-Range": f"bytes 0-{len(WHOLE) - 1}/{len(WHOLE)}"})

    with pytest.raises(DownloadBroken, match="a range other than bytes 10-"):
        ControlPlane("http://127.0.0.1:9", "t", transport=httpx.MockTransport(from_the_start)).download_checkpoint(
            3, 5, tmp_path / "c.tar")
    assert not (tmp_path / "c.tar").exists()


def test_fewer_bytes_than_announced_are_kept_as_a_part_not_renamed(tmp_path):
    def short(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=WHOLE[:100], headers={
            "ETag": ETAG, "Accept-Ranges": "bytes", "Content-Range": f"bytes 0-99/{len(WHOLE)}"})

    with pytest.raises(DownloadBroken, match=f"100 bytes arrived of the {len(WHOLE)}"):
        ControlPlane("http://127.0.0.1:9", "t", transport=httpx.MockTransport(short)).download_checkpoint(
            3, 5, tmp_path / "c.tar")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.tar.part", "c.tar.part.etag"]


def test_a_part_larger_than_the_servers_file_is_removed_for_a_start_over(tmp_path):
    leave_part(tmp_path, WHOLE + b"more", ETAG)
    with pytest.raises(DownloadBroken, match="start over"):
        ControlPlane("http://127.0.0.1:9", "t", transport=httpx.MockTransport(server)).download_checkpoint(
            3, 5, tmp_path / "c.tar")
    assert list(tmp_path.iterdir()) == []
