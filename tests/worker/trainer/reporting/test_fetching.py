"""How long a worker's fetch waits for the control plane: a real local HTTP server that is not
there yet, then busy, then answers; refusals that fail at once; a bound on the waiting. The
pauses are injected (a clock that the pauses move), so no test waits for them."""
import hashlib
import json
import logging
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.support.asgi_server import free_port
from worker.trainer.checkpoints.fetch import CheckpointFetchError, local_checkpoint
from worker.trainer.data.fetch import DatasetFetchError, dataset_file
from worker.trainer.reporting.fetching import CHUNK, FETCH_PATIENCE_S, MAX_WAIT_S, Download, Patience
from worker.trainer.spec import DatasetSpec

CONTENT = b'{"prompt": "What is 1 + 1?", "answer": "#### 2"}\n' * 10
SHA256 = hashlib.sha256(CONTENT).hexdigest()


class ScriptedServer:
    """Answers each GET with the next (status, headers, body) of its script; the last one repeats."""

    def __init__(self, port: int, script: list[tuple[int, dict, bytes]]):
        self.port, self.script, self.requests = port, list(script), []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                owner.requests.append(self.headers.get("Authorization"))
                status, headers, body = owner.script.pop(0) if len(owner.script) > 1 else owner.script[0]
                self.send_response(status)
                for name, value in {"Content-Length": str(len(body)), **headers}.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.httpd = None
        self.handler = Handler

    def start(self) -> None:
        self.httpd = ThreadingHTTPServer(("127.0.0.1", self.port), self.handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def stop(self) -> None:
        if self.httpd is not None:
            self.httpd.shutdown()
            self.httpd.server_close()


class FakeTime:
    """A clock that only the pauses move; `on_sleep` runs at each pause (starts a server...)."""

    def __init__(self, on_sleep=None):
        self.now, self.pauses, self.on_sleep = 0.0, [], on_sleep

    def sleep(self, seconds: float) -> None:
        self.pauses.append(seconds)
        self.now += seconds
        if self.on_sleep is not None:
            self.on_sleep(len(self.pauses))

    def patience(self, **fields) -> Patience:
        return Patience(sleep=self.sleep, clock=lambda: self.now, **fields)


def detail(message: str) -> bytes:
    return json.dumps({"detail": message}).encode()


@pytest.fixture
def port():
    return free_port()


@pytest.fixture
def scripted(port):
    servers = []

    def serve(script):
        servers.append(ScriptedServer(port, script))
        return servers[-1]

    yield serve
    for server in servers:
        server.stop()


def spec(port) -> DatasetSpec:
    return DatasetSpec(kind="file", format="jsonl", url=f"http://127.0.0.1:{port}/api/runs/1/dataset/", sha256=SHA256)


def test_a_control_plane_away_then_busy_then_answering_is_waited_for_with_each_wait_said(port, scripted, tmp_path):
    server = scripted([(503, {}, detail("restarting")), (429, {"Retry-After": "7"}, detail("slow down")),
                       (200, {}, CONTENT)])
    time = FakeTime(on_sleep=lambda pauses: server.start() if pauses == 1 else None)  # not there at first
    said = []
    fetched = dataset_file(spec(port), "run-token", cache_dir=tmp_path, patience=time.patience(), on_wait=said.append)
    assert fetched.source == "fetched" and fetched.path.read_bytes() == CONTENT
    assert time.pauses == [1.0, 2.0, 7.0]  # doubling, but as long as a 429 asks
    assert len(server.requests) == 3 and set(server.requests) == {"Bearer run-token"}
    assert "did not answer" in said[0] and "trying again in 1 s" in said[0]
    assert "HTTP 503 from the control plane: restarting" in said[1]
    assert "HTTP 429 from the control plane: slow down" in said[2] and "trying again in 7 s" in said[2]


def test_without_a_way_to_say_it_each_wait_is_a_warning_the_worker_forwards_to_the_runs_log(port, scripted,
                                                                                           tmp_path, caplog):
    server = scripted([(200, {}, CONTENT)])
    time = FakeTime(on_sleep=lambda pauses: server.start())
    with caplog.at_level(logging.WARNING, logger="worker.trainer.reporting.fetching"):
        dataset_file(spec(port), "run-token", cache_dir=tmp_path, patience=time.patience())
    assert [record.levelname for record in caplog.records] == ["WARNING"]
    assert "the dataset is not fetched yet" in caplog.records[0].getMessage()


@pytest.mark.parametrize("status, message", [(401, "send the run's token as a Bearer token"),
                                             (403, "not allowed"),
                                             (404, "the file of dataset 'rows' is no longer on the control plane")])
def test_a_refusal_fails_at_once_with_its_message(port, scripted, tmp_path, status, message):
    scripted([(status, {}, detail(message))]).start()
    time = FakeTime()
    with pytest.raises(DatasetFetchError, match=f"HTTP {status}\\): {message}"):
        dataset_file(spec(port), "run-token", cache_dir=tmp_path, patience=time.patience())
    assert time.pauses == []
    assert list(tmp_path.iterdir()) == []


def test_a_checkpoint_refused_fails_at_once_too(port, scripted, tmp_path):
    server = scripted([(404, {}, detail("no uploaded checkpoint of step 40 in the control plane's store"))])
    server.start()
    time = FakeTime()
    with pytest.raises(CheckpointFetchError, match="HTTP 404\\): no uploaded checkpoint of step 40"):
        local_checkpoint("/elsewhere/step-0000040", f"http://127.0.0.1:{port}/archive", "t", tmp_path,
                         patience=time.patience())
    assert time.pauses == [] and len(server.requests) == 1


def test_the_waiting_is_bounded_with_capped_doubling_pauses_then_says_how_long_it_waited(port, tmp_path):
    time = FakeTime()  # nothing ever listens on the port
    said = []
    with pytest.raises(DatasetFetchError) as failed:
        dataset_file(spec(port), "run-token", cache_dir=tmp_path, patience=time.patience(), on_wait=said.append)
    assert time.pauses[:7] == [1, 2, 4, 8, 16, 30, 30] and max(time.pauses) == MAX_WAIT_S
    assert sum(time.pauses) == FETCH_PATIENCE_S  # the last pause is cut to what is left
    assert len(said) == len(time.pauses)
    assert (f"did not give it in 300 s and {len(time.pauses) + 1} tries (a fetch waits up to 300 s); "
            "last: the control plane did not answer") in str(failed.value)


def test_the_default_patience_outlasts_a_control_plane_restart():
    """A few minutes: longer than a deploy or a migration keeps the control plane away."""
    assert 120 <= Patience().window_s == FETCH_PATIENCE_S <= 600 and Patience().max_wait_s <= 60


def test_bytes_that_arrive_wrong_are_fetched_once_more_only(port, scripted, tmp_path):
    server = scripted([(200, {}, b"not the dataset\n")])
    server.start()
    time = FakeTime()
    with pytest.raises(DatasetFetchError, match="arrived wrong 2 times: checksum mismatch"):
        dataset_file(spec(port), "run-token", cache_dir=tmp_path, patience=time.patience())
    assert len(server.requests) == 2 and time.pauses == []


class RangeServer:
    """Serves `versions` of one body, as the control plane does (ETag, Accept-Ranges, Range with
    If-Range); the n-th answer is cut after cuts[n] body bytes, by closing the connection."""

    def __init__(self, port: int, body: bytes, cuts: list[int], ranges: bool = True):
        self.port, self.body, self.cuts, self.ranges, self.heads = port, body, list(cuts), ranges, []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self):
                owner.heads.append({name.lower(): value for name, value in self.headers.items()})
                body, etag = owner.body, f'"{hashlib.sha256(owner.body).hexdigest()}"'
                asked, if_range = self.headers.get("Range"), self.headers.get("If-Range")
                start = int(asked.removeprefix("bytes=").rstrip("-")) if asked and owner.ranges else 0
                if start and if_range not in (None, etag):
                    start = 0
                if start >= len(body) and start:
                    self.send_response(416)
                    self.send_header("Content-Range", f"bytes */{len(body)}")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                self.send_response(206 if start else 200)
                if start:
                    self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
                if owner.ranges:
                    self.send_header("Accept-Ranges", "bytes")
                    self.send_header("ETag", etag)
                self.send_header("Content-Length", str(len(body) - start))
                self.end_headers()
                cut = owner.cuts.pop(0) if owner.cuts else None
                self.wfile.write(body[start:start + cut] if cut is not None else body[start:])
                self.close_connection = cut is not None

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


BIG = bytes(range(256)) * 4096 * 3  # 3 MiB


@pytest.fixture
def range_server(port):
    servers = []

    def serve(body, cuts, ranges=True):
        servers.append(RangeServer(port, body, cuts, ranges))
        return servers[-1]

    yield serve
    for server in servers:
        server.stop()


def test_a_download_cut_twice_goes_on_from_the_bytes_it_has(port, range_server, tmp_path):
    server = range_server(BIG, cuts=[CHUNK + 100, CHUNK + 5])
    said = []
    Download(f"http://127.0.0.1:{port}/f", "t", tmp_path / "f", "dataset", say=said.append).fetch()
    assert (tmp_path / "f").read_bytes() == BIG
    assert [head.get("range") for head in server.heads] == [None, f"bytes={CHUNK}-", f"bytes={2 * CHUNK}-"]
    assert server.heads[1]["if-range"] == f'"{hashlib.sha256(BIG).hexdigest()}"'
    assert len(said) == 2 and "going on from there" in said[0]


def test_bytes_changed_since_the_cut_are_fetched_whole_not_mixed(port, range_server, tmp_path):
    server = range_server(BIG, cuts=[CHUNK + 100])
    download = Download(f"http://127.0.0.1:{port}/f", "t", tmp_path / "f", "checkpoint", say=lambda _: None)
    server.body = BIG[::-1]  # changed after the first answer's headers: If-Range no longer matches
    download.fetch()
    assert (tmp_path / "f").read_bytes() == BIG[::-1] and server.heads[1]["range"] == f"bytes={CHUNK}-"


def test_without_ranges_a_cut_download_starts_over_after_a_pause(port, range_server, tmp_path):
    server = range_server(CONTENT, cuts=[100], ranges=False)
    time = FakeTime()
    fetched = dataset_file(spec(port), "t", cache_dir=tmp_path, patience=time.patience())
    assert fetched.path.read_bytes() == CONTENT and time.pauses == [1.0]
    assert [head.get("range") for head in server.heads] == [None, None]


def test_every_byte_already_here_is_a_finished_download(port, range_server, tmp_path):
    server = range_server(BIG, cuts=[])
    download = Download(f"http://127.0.0.1:{port}/f", None, tmp_path / "f", "dataset")
    download.fetch()
    download.fetch()  # asks for the bytes after the last one: a 416 saying the whole is here
    assert (tmp_path / "f").read_bytes() == BIG and server.heads[1]["range"] == f"bytes={len(BIG)}-"
