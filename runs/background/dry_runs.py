"""Model-played environment dry runs, where a model may be loaded: never in the web process
(runs/environments/dry_run_job.py). Each process of the consumer plays one at a time."""
from runs.background.tasks import background_task
from runs.environments import dry_run_job


@background_task(dry_run_job.TASK)
def play_dry_run(dry_run_id: int) -> None:
    dry_run_job.play(dry_run_id)
