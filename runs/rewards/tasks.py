"""The queued dry run of a judge or a reward model, where a model is loaded or served: never in
the web process (runs/dry_runs/jobs.py). Each process of the consumer does one at a time."""
from runs.background.tasks import background_task
from runs.dry_runs import jobs as dry_run_jobs
from runs.rewards import model_dry_run as reward_dry_run


@background_task(reward_dry_run.TASK)
def score_reward_dry_run(dry_run_id: int) -> None:
    dry_run_jobs.run(reward_dry_run.JOB, dry_run_id)
