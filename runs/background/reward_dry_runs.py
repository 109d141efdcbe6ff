"""Dry runs of judges and reward models, where a model is served or loaded: never in the web process
(runs/rewards/model_dry_run.py). Each process of the consumer scores one at a time."""
from runs.background.tasks import background_task
from runs.rewards import model_dry_run


@background_task(model_dry_run.TASK)
def score_reward_dry_run(dry_run_id: int) -> None:
    model_dry_run.score(dry_run_id)
