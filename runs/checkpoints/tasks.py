"""Finishing a checkpoint upload: the part of a worker's complete that reads every byte."""
from runs.background.tasks import background_task
from runs.checkpoints.finishing import FINALIZE_TASK, finalize_upload


@background_task(FINALIZE_TASK)
def finalize_checkpoint(upload_id: int, round: int) -> None:
    """Checks the upload against its manifest, stores and lists it (runs/checkpoints/finishing.py)."""
    finalize_upload(upload_id, round)
