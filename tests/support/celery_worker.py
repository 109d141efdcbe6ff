"""A real Celery worker process for a live control plane (AsgiServer), and stopping it."""
import subprocess
import sys
from pathlib import Path

from tests.support.asgi_server import ROOT, AsgiServer
from worker.trainer.processes.groups import stop_process_group


def start_worker(server: AsgiServer, queues: str, env: dict | None = None, log_path: Path | None = None,
                 command_prefix: list[str] | None = None) -> subprocess.Popen:
    """A worker on `queues`, by default with the server's environment, logging to worker.log beside
    the server's log. `env` replaces the environment (a worker on another machine shares none of
    the control plane's); `command_prefix` runs the worker under a wrapper that must exec it (a
    private mount namespace, say), so that the worker's pid is the wrapper's."""
    log_path = log_path or server.log_path.parent / "worker.log"
    return subprocess.Popen(
        [*(command_prefix or []), sys.executable, "-m", "celery", "-A", "worker.celery_app", "worker", "-Q", queues,
         "--concurrency", "1", "--loglevel", "INFO", "--without-mingle", "--without-gossip"],
        cwd=ROOT, env=server.env if env is None else env, stdout=log_path.open("w"),
        stderr=subprocess.STDOUT, start_new_session=True,
    )


def stop_worker(worker: subprocess.Popen) -> None:
    stop_process_group(worker, grace_s=20)
