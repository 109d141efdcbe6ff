"""A real Celery worker process for a live control plane (AsgiServer), and stopping it."""
import subprocess
import sys

from tests.support.asgi_server import ROOT, AsgiServer
from worker.trainer.process_groups import stop_process_group


def start_worker(server: AsgiServer, queues: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "worker.celery_app", "worker", "-Q", queues,
         "--concurrency", "1", "--loglevel", "INFO", "--without-mingle", "--without-gossip"],
        cwd=ROOT, env=server.env, stdout=(server.log_path.parent / "worker.log").open("w"),
        stderr=subprocess.STDOUT, start_new_session=True,
    )


def stop_worker(worker: subprocess.Popen) -> None:
    stop_process_group(worker, grace_s=20)
