"""Finishing a checkpoint upload: the part of a worker's complete that reads every byte."""
from runs.actions.checkpoints import FINALIZE_TASK, finalize_upload
from runs.background.tasks import background_task


@background_task(FINALIZE_TASK)
def finalize_checkpoint(upload_id: int, round: int) -> None:
    """Checks the upload against its manifest, stores and lists it (runs/actions/checkpoints.py)."""
    finalize_upload(upload_id, round)
