"""The reporter: ordered batches, kept on disk while the control plane is away, nothing lost or doubled."""
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.support.asgi_server import SEED_RUN, AsgiServer, logged_in_client
from worker.trainer.reporting.client import IngestClient
from worker.trainer.reporting.reporter import Reporter


class StubControlPlane:
    """A local HTTP server that records batches, and can be told to fail or refuse."""

    def __init__(self):
        self.received: list[int] = []
        self.mode = "ok"  # ok | down (503) | refuse (400)
        self.cancel = False
        self.status = "running"
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                if stub.mode == "down":
                    return self._reply(503, {"detail": "restarting"})
                if stub.mode == "refuse":
                    return self._reply(400, {"detail": "nothing was stored"})
                stub.received += [event["seq"] for event in body["events"]]
                self._reply(200, {"stored": len(body["events"]), "duplicates": 0, "status": stub.status,
                                  "cancel_requested": stub.cancel})

            def _reply(self, code, payload):
                data = json.dumps(payload).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/api/runs/1/events/"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def stub():
    server = StubControlPlane()
    yield server
    server.close()


def make_reporter(url, folder, **kwargs):
    client = IngestClient(url, "tok", source="trainer:1", retries=0, backoff_s=0)
    return Reporter(client, folder, flush_interval_s=0.05, max_backoff_s=0.2, **kwargs).start()


def emit_logs(reporter, count):
    return [reporter.emit({"type": "log", "message": f"line {i}"}) for i in range(count)]


def test_events_arrive_in_order_numbered_from_one(stub, tmp_path):
    reporter = make_reporter(stub.url, tmp_path, max_batch=7)
    emit_logs(reporter, 20)
    assert reporter.close()
    assert stub.received == list(range(1, 21))


def test_local_copy_holds_every_event(stub, tmp_path):
    reporter = make_reporter(stub.url, tmp_path)
    emit_logs(reporter, 5)
    reporter.close()
    lines = (tmp_path / "events-trainer-1.jsonl").read_text().splitlines()
    assert [json.loads(line)["seq"] for line in lines] == [1, 2, 3, 4, 5]


def test_events_wait_while_the_control_plane_is_down_then_arrive_once(stub, tmp_path):
    stub.mode = "down"
    reporter = make_reporter(stub.url, tmp_path)
    emit_logs(reporter, 10)
    time.sleep(0.5)
    assert reporter.backlog == 10 and stub.received == []
    stub.mode = "ok"
    assert reporter.close()
    assert stub.received == list(range(1, 11))


def test_a_restarted_reporter_resends_what_was_not_acknowledged(stub, tmp_path):
    first = make_reporter(stub.url, tmp_path)
    emit_logs(first, 3)
    first.flush()
    stub.mode = "down"
    emit_logs(first, 2)
    assert not first.close(timeout_s=0.3)
    stub.mode = "ok"
    second = make_reporter(stub.url, tmp_path)
    assert second.emit({"type": "log", "message": "after restart"}) == 6
    assert second.close()
    assert stub.received == [1, 2, 3, 4, 5, 6]


def test_a_refused_batch_is_skipped_and_later_events_still_arrive(stub, tmp_path):
    stub.mode = "refuse"
    reporter = make_reporter(stub.url, tmp_path)
    emit_logs(reporter, 2)
    reporter.flush()
    stub.mode = "ok"
    emit_logs(reporter, 1)
    assert reporter.close()
    assert stub.received == [3]


def test_an_invalid_event_fails_in_the_caller(stub, tmp_path):
    reporter = make_reporter(stub.url, tmp_path)
    with pytest.raises(ValueError, match="colour"):
        reporter.emit({"type": "log", "message": "x", "colour": "red"})
    reporter.close()


def test_the_reply_reaches_the_trainer(stub, tmp_path):
    stub.cancel = True
    replies = []
    reporter = make_reporter(stub.url, tmp_path, on_reply=replies.append)
    reporter.emit({"type": "heartbeat"})
    reporter.close()
    assert replies and replies[-1].cancel_requested


def test_nothing_lost_or_doubled_when_the_real_control_plane_restarts(tmp_path):
    (tmp_path / "cp").mkdir()
    server = AsgiServer(tmp_path / "cp").start()
    try:
        seed = server.shell_json(SEED_RUN)
        client = IngestClient(f"{server.url}/api/runs/{seed['run_id']}/events/", seed["token"], source="trainer:1",
                              retries=0, backoff_s=0)
        reporter = Reporter(client, tmp_path / "outbox", flush_interval_s=0.05, max_batch=20, max_backoff_s=0.5).start()
        for step in range(50):
            reporter.emit({"type": "metrics", "step": step, "values": {"train/loss": step / 10}})
        assert reporter.flush()
        server.stop()
        for step in range(50, 120):
            reporter.emit({"type": "metrics", "step": step, "values": {"train/loss": step / 10}})
        time.sleep(1)
        server.start()
        assert reporter.close(timeout_s=60)
        owner = logged_in_client(server, "owner", "owner-pass-123")
        stored = owner.get(f"/api/runs/{seed['run_id']}/metrics/").json()["series"]["train/loss"]
    finally:
        server.stop()
    local = [json.loads(line) for line in (tmp_path / "outbox" / "events-trainer-1.jsonl").read_text().splitlines()]
    assert stored["step"] == [event["step"] for event in local] == list(range(120))



def test_offline_reporter_keeps_events_locally(tmp_path):
    reporter = Reporter(None, tmp_path, source="trainer:1").start()
    emit_logs(reporter, 3)
    assert reporter.backlog == 0
    assert reporter.close()
    assert len((tmp_path / "events-trainer-1.jsonl").read_text().splitlines()) == 3


def test_send_soon_does_not_wait_for_the_flush_interval(stub, tmp_path):
    reporter = Reporter(IngestClient(stub.url, "token", source="trainer"), tmp_path, flush_interval_s=60).start()
    try:
        time.sleep(0.3)  # the reporter thread is now waiting out its interval
        reporter.emit({"type": "status", "status": "running", "message": ""})
        reporter.send_soon()
        deadline = time.monotonic() + 5
        while not stub.received and time.monotonic() < deadline:
            time.sleep(0.02)
        assert stub.received == [1]
    finally:
        reporter.close(timeout_s=5)
