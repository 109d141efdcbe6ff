"""The Hub push as a task of the control plane's queue: see runs/actions/hub_push.py."""
from runs.actions.hub_push import PUSH_TASK, push_checkpoint
from runs.artifacts.readable_checkpoints import files_of
from runs.background.tasks import background_task


@background_task(PUSH_TASK)
def push_checkpoint_task(push_id: int, sealed_token: str) -> None:
    push_checkpoint(push_id, sealed_token, files_of)
