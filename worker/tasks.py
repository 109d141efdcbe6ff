"""Celery tasks. A worker never touches the database: it reports through the ingest API."""
import logging

from pydantic import ValidationError

from worker.celery_app import app
from worker.settings import WorkerSettings
from worker.supervisor import RunSupervisor
from worker.trainer.spec import LaunchSpec
from worker.trainer.spec_errors import describe_spec_errors

log = logging.getLogger(__name__)


@app.task(name="worker.tasks.execute_run", acks_late=True)
def execute_run(run_id: int, spec: dict) -> str:
    try:
        launch = LaunchSpec.model_validate(spec)
    except ValidationError as exc:
        log.error("run %s: refusing an invalid launch spec:\n%s", run_id, describe_spec_errors(exc))
        return "invalid-spec"
    return RunSupervisor(launch, WorkerSettings.from_env()).run()
