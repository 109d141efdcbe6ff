"""Queued dry runs, where a model is loaded or served: never in the web process
(runs/background/dry_run_jobs.py). Each process of the consumer does one at a time."""
from runs.background import dry_run_jobs
from runs.background.tasks import background_task
from runs.environments import model_dry_run as environment_dry_run
from runs.rewards import model_dry_run as reward_dry_run


@background_task(reward_dry_run.TASK)
def score_reward_dry_run(dry_run_id: int) -> None:
    dry_run_jobs.run(reward_dry_run.JOB, dry_run_id)


@background_task(environment_dry_run.TASK)
def play_dry_run(dry_run_id: int) -> None:
    dry_run_jobs.run(environment_dry_run.JOB, dry_run_id)
