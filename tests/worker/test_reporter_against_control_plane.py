"""The trainer's reporter against a real control plane (an ASGI server with its own database)
that goes away and comes back: run on the embedded defaults and again on the services."""
import json
import time

from tests.support.asgi_server import SEED_RUN, AsgiServer, logged_in_client
from worker.trainer.reporting.client import IngestClient
from worker.trainer.reporting.reporter import Reporter


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
