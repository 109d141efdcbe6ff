"""The check of a large upload, after the request that stored it (runs/datasets/deferred_check.py)."""
from runs.background.tasks import background_task
from runs.datasets import deferred_check


@background_task(deferred_check.TASK)
def check_dataset(dataset_id: int) -> None:
    deferred_check.check_stored(dataset_id)
