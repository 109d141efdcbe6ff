"""A real Celery worker process for a live control plane (AsgiServer), and stopping it."""
import os
import signal
import subprocess
import sys

from tests.support.asgi_server import ROOT, AsgiServer


def start_worker(server: AsgiServer, queues: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "worker.celery_app", "worker", "-Q", queues,
         "--concurrency", "1", "--loglevel", "INFO", "--without-mingle", "--without-gossip"],
        cwd=ROOT, env=server.env, stdout=(server.log_path.parent / "worker.log").open("w"),
        stderr=subprocess.STDOUT, start_new_session=True,
    )


def stop_worker(worker: subprocess.Popen) -> None:
    os.killpg(worker.pid, signal.SIGTERM)
    try:
        worker.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(worker.pid, signal.SIGKILL)
        worker.wait()
