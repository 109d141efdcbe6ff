"""Waiting for a server someone else started: it answers, it never does, or the run stops."""
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from worker.trainer.inference.readiness import ServerNotReady, wait_for_health
from worker.trainer.inference.server import free_port
from worker.trainer.processes.lifetime import process_age_s


class Health(BaseHTTPRequestHandler):
    ready_at = 0.0

    def do_GET(self):
        self.send_response(200 if time.monotonic() >= self.ready_at and self.path == "/health" else 503)
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture
def server_ready_in():
    servers = []

    def start(seconds: float) -> str:
        handler = type("DelayedHealth", (Health,), {"ready_at": time.monotonic() + seconds})
        server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_port}"

    yield start
    for server in servers:
        server.shutdown()


def test_waits_until_health_answers_200(server_ready_in):
    waited = wait_for_health(server_ready_in(0.6), timeout_s=10)
    assert 0.5 <= waited < 10


def test_a_server_that_never_answers_is_an_error_naming_it():
    url = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(ServerNotReady, match=f"{url} did not answer /health within 0 s"):
        wait_for_health(url, timeout_s=0.3)


def test_a_stop_request_ends_the_wait(server_ready_in):
    with pytest.raises(ServerNotReady, match="stopped waiting"):
        wait_for_health(server_ready_in(60), timeout_s=60, should_stop=lambda: True)


def test_process_age_counts_from_the_process_start():
    assert 0.0 < process_age_s() < 24 * 3600
