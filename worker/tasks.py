"""Celery tasks. A worker never touches the database: it reports through the ingest API.

A worker whose pool is a Ray cluster (WORKER_RAY_ADDRESS) places each run on a machine of the
cluster (worker/placement/); any other runs it here, as always."""
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
    settings = WorkerSettings.from_env()
    if settings.ray_address:
        from worker.placement.child import run_placed

        return run_placed(spec, settings)
    return RunSupervisor(launch, settings).run()
