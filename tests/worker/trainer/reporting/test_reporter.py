"""The reporter: ordered batches, kept on disk while the control plane is away, nothing lost or doubled."""
import json
import time

import pytest

from tests.support.stub_control_plane import StubControlPlane
from worker.trainer.reporting.client import IngestClient
from worker.trainer.reporting.reporter import Reporter


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


def test_a_backlog_of_large_events_goes_in_batches_the_control_plane_takes(stub, tmp_path):
    # Forty events of ~20 KB each: by count alone one batch of 800 KB, over the route's limit,
    # would be refused and skipped whole.
    stub.max_body = 100_000
    reporter = Reporter(IngestClient(stub.url, "tok", source="trainer:1", retries=0, backoff_s=0), tmp_path,
                        flush_interval_s=60, max_batch_bytes=80_000)
    seqs = [reporter.emit({"type": "log", "message": "x" * 20_000}) for _ in range(40)]
    reporter.start()
    assert reporter.close()
    assert stub.received == seqs
    assert len(stub.batch_bytes) > 1 and max(stub.batch_bytes) <= 100_000
