"""Celery tasks. A worker never touches the database: it reports through the ingest API."""
import logging
import socket

from pydantic import ValidationError

from worker.celery_app import app
from worker.trainer.reporting.client import IngestClient
from worker.trainer.spec import LaunchSpec

log = logging.getLogger(__name__)


@app.task(name="worker.tasks.execute_run", acks_late=True)
def execute_run(run_id: int, spec: dict) -> str:
    try:
        launch = LaunchSpec.model_validate(spec)
    except ValidationError as exc:
        log.error("run %s: refusing an invalid launch spec: %s", run_id, exc)
        return "invalid-spec"
    client = IngestClient(launch.ingest.url, launch.ingest.token, source=f"supervisor:{launch.attempt}")
    try:
        # Sequence numbers are fixed per message, so a redelivered task re-sends
        # the same events and the control plane stores them once.
        reply = client.send([{
            "seq": 1, "type": "log", "source": "worker",
            "message": f"worker {socket.gethostname()} received run {run_id} (attempt {launch.attempt})",
        }])
        if reply.status != "queued" or reply.cancel_requested:
            return f"skipped: run is {reply.status}"
        client.send([{
            "seq": 2, "type": "status", "status": "failed",
            "message": "This worker has no trainer installed yet: it received the run but cannot train it.",
        }])
        return "received"
    finally:
        client.close()
