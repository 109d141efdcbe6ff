"""The route a vLLM server on a machine of its own takes weights by: the whole body, or nothing."""
import asyncio
import json
from collections import namedtuple

import httpx
import pytest

from worker.trainer.inference import weight_upload
from worker.trainer.inference.api_key_guard import ApiKeyGuard, bearer
from worker.trainer.inference.weight_upload import FILE_NAME, ROUTE, WeightUpload

KEY = "k" * 43


async def app(scope, receive, send):
    """Stands for vLLM's app."""
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"vllm"})


def call(upload: WeightUpload, method: str, path: str, **options) -> httpx.Response:
    async def go():
        transport = httpx.ASGITransport(app=ApiKeyGuard(upload, key=KEY))
        async with httpx.AsyncClient(transport=transport, base_url="http://vllm") as client:
            return await client.request(method, path, **options)

    return asyncio.run(go())


def raw_put(upload: WeightUpload, length: int, messages: list[dict]) -> list[dict]:
    """What the route sends back when the server hands it these messages under a Content-Length:
    what no well-behaved HTTP client makes (a body cut short, a client gone)."""
    scope = {"type": "http", "method": "PUT", "path": ROUTE, "headers": [(b"content-length", str(length).encode())]}
    pending, sent = iter(messages), []

    async def receive():
        return next(pending)

    async def send(message):
        sent.append(message)

    asyncio.run(upload(scope, receive, send))
    return sent


def put(upload: WeightUpload, body: bytes, **headers) -> httpx.Response:
    return call(upload, "PUT", ROUTE, content=body, headers={**bearer(KEY), **headers})


def test_an_upload_lands_whole_in_the_folder_and_names_it(tmp_path):
    upload = WeightUpload(app, folder=str(tmp_path / "weights"))
    body = bytes(range(256)) * 1000
    response = put(upload, body)
    assert response.status_code == 200
    answer = response.json()
    assert answer["folder"] == str(tmp_path / "weights") and answer["bytes"] == len(body)
    assert (tmp_path / "weights" / FILE_NAME).read_bytes() == body
    assert sorted(path.name for path in (tmp_path / "weights").iterdir()) == [FILE_NAME]


def test_a_body_of_more_pieces_than_the_writer_queues_is_written_whole_in_order(tmp_path, monkeypatch):
    monkeypatch.setattr(weight_upload, "QUEUED_PIECES", 1)  # the receiver waits for the writer
    upload = WeightUpload(app, folder=str(tmp_path))

    async def pieces():
        for index in range(10):
            yield bytes([index]) * 700

    response = call(upload, "PUT", ROUTE, content=pieces(), headers={**bearer(KEY), "Content-Length": "7000"})
    assert response.status_code == 200
    assert (tmp_path / FILE_NAME).read_bytes() == b"".join(bytes([index]) * 700 for index in range(10))


def test_without_the_key_nothing_is_written(tmp_path):
    upload = WeightUpload(app, folder=str(tmp_path))
    response = call(upload, "PUT", ROUTE, content=b"weights")
    assert response.status_code == 401
    assert not (tmp_path / FILE_NAME).exists()


def test_a_body_that_does_not_match_its_length_keeps_the_last_weights(tmp_path):
    (tmp_path / FILE_NAME).write_bytes(b"the last weights")
    upload = WeightUpload(app, folder=str(tmp_path))

    # A client that says 100 bytes and sends 7: the server sees the body end short.
    sent = raw_put(upload, 100, [{"type": "http.request", "body": b"cut off", "more_body": False}])
    assert sent[0]["status"] == 400
    assert "7 bytes where Content-Length said 100" in json.loads(sent[1]["body"])["error"]
    assert (tmp_path / FILE_NAME).read_bytes() == b"the last weights"
    assert sorted(path.name for path in tmp_path.iterdir()) == [FILE_NAME]


def test_a_client_gone_mid_body_leaves_no_partial_file(tmp_path):
    upload = WeightUpload(app, folder=str(tmp_path))

    sent = raw_put(upload, 100, [{"type": "http.request", "body": b"half", "more_body": True},
                                 {"type": "http.disconnect"}])
    assert sent[0]["status"] == 400
    assert list(tmp_path.iterdir()) == []


def test_an_upload_without_a_length_or_by_another_method_is_refused(tmp_path):
    upload = WeightUpload(app, folder=str(tmp_path))

    async def chunked():
        yield b"weights"

    without_length = call(upload, "PUT", ROUTE, content=chunked(), headers=bearer(KEY))
    assert without_length.status_code == 411 and "Content-Length" in without_length.json()["error"]
    assert call(upload, "POST", ROUTE, content=b"x", headers=bearer(KEY)).status_code == 405
    assert list(tmp_path.iterdir()) == []


def test_weights_larger_than_the_disk_has_free_are_refused_before_a_byte_is_written(tmp_path, monkeypatch):
    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(weight_upload.shutil, "disk_usage", lambda folder: usage(100, 90, 10))
    upload = WeightUpload(app, folder=str(tmp_path))
    response = put(upload, b"x" * 11)
    assert response.status_code == 507
    assert response.json()["error"] == f"the weights (11 bytes) do not fit in {tmp_path} (10 bytes free)"
    assert list(tmp_path.iterdir()) == []


def test_without_a_folder_the_route_is_not_there_and_other_paths_reach_vllm(tmp_path, monkeypatch):
    monkeypatch.delenv(weight_upload.FOLDER_VARIABLE, raising=False)
    assert put(WeightUpload(app), b"x").text == "vllm"
    assert call(WeightUpload(app, folder=str(tmp_path)), "GET", "/v1/models", headers=bearer(KEY)).text == "vllm"


@pytest.mark.parametrize("path", ["/grpo/weights/", "/grpo/weights/../x"])
def test_only_the_route_itself_uploads(tmp_path, path):
    assert call(WeightUpload(app, folder=str(tmp_path)), "PUT", path, content=b"x", headers=bearer(KEY)).text == "vllm"


def test_a_write_that_fails_keeps_the_last_weights_and_says_where(tmp_path, monkeypatch):
    (tmp_path / FILE_NAME).write_bytes(b"the last weights")

    class FullDisk(weight_upload._Writer):
        def run(self):
            super().run()
            self.error = OSError(28, "No space left on device")

    monkeypatch.setattr(weight_upload, "_Writer", FullDisk)
    response = put(WeightUpload(app, folder=str(tmp_path)), b"new weights")
    assert response.status_code == 507
    assert response.json()["error"] == f"writing the weights into {tmp_path} failed: [Errno 28] No space left on device"
    assert (tmp_path / FILE_NAME).read_bytes() == b"the last weights"
    assert sorted(path.name for path in tmp_path.iterdir()) == [FILE_NAME]


def test_a_writer_that_cannot_open_its_file_drains_what_it_is_handed_and_says_why(tmp_path):
    import queue

    pieces: queue.Queue = queue.Queue()
    writer = weight_upload._Writer(tmp_path / "no such folder" / "file", pieces)
    writer.start()
    for piece in (b"a", b"b", None):
        pieces.put(piece)
    writer.join(timeout=5)
    assert not writer.is_alive() and isinstance(writer.error, FileNotFoundError)
