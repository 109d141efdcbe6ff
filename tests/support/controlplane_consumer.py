"""A real consumer of the control plane's queues (`celery -A controlplane.celery worker -Q
controlplane,controlplane-user`, as `make run` starts it) for a live control plane (AsgiServer):
the same DATA_DIR, database and broker as the server.

    with running_consumer(server):
        ...  # requests that enqueue background tasks now see them done
"""
import contextlib
import subprocess
import sys
import time
from pathlib import Path

from scripts.run_local import consumer_args
from tests.support.asgi_server import ROOT, AsgiServer
from worker.trainer.processes.groups import stop_process_group

READY_TIMEOUT_S = 60


def start_consumer(server: AsgiServer, log_path: Path | None = None, concurrency: int = 1) -> subprocess.Popen:
    """A consumer with the server's environment, logging to consumer.log beside the server's log."""
    log_path = log_path or server.log_path.parent / "consumer.log"
    consumer = subprocess.Popen(
        [sys.executable, *consumer_args(concurrency), "--without-mingle", "--without-gossip"],
        cwd=ROOT, env=server.env, stdout=log_path.open("w"), stderr=subprocess.STDOUT, start_new_session=True,
    )
    consumer.log_path = log_path
    return consumer


def wait_until_consuming(consumer: subprocess.Popen, timeout_s: float = READY_TIMEOUT_S) -> None:
    """Until Celery logs "<name> ready." (it listens on its queue from then on)."""
    deadline = time.monotonic() + timeout_s
    while " ready." not in consumer.log_path.read_text(errors="replace"):
        if consumer.poll() is not None:
            raise RuntimeError(f"consumer exited with {consumer.returncode}:\n{consumer.log_path.read_text()[-3000:]}")
        if time.monotonic() > deadline:
            raise TimeoutError(f"consumer not ready in {timeout_s} s:\n{consumer.log_path.read_text()[-3000:]}")
        time.sleep(0.2)


def stop_consumer(consumer: subprocess.Popen) -> None:
    stop_process_group(consumer, grace_s=20)


@contextlib.contextmanager
def running_consumer(server: AsgiServer, concurrency: int = 1):
    consumer = start_consumer(server, concurrency=concurrency)
    try:
        wait_until_consuming(consumer)
        yield consumer
    finally:
        stop_consumer(consumer)
