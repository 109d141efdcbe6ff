"""The queued dry run of an environment played by the model: never in the web process
(runs/dry_runs/jobs.py). Each process of the consumer does one at a time."""
from runs.background.tasks import background_task
from runs.dry_runs import jobs as dry_run_jobs
from runs.environments import model_dry_run as environment_dry_run


@background_task(environment_dry_run.TASK)
def play_dry_run(dry_run_id: int) -> None:
    dry_run_jobs.run(environment_dry_run.JOB, dry_run_id)
