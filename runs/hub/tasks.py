"""The Hub push as a task of the control plane's queue: see runs/hub/push.py."""
from runs.checkpoints.readable import files_of
from runs.background.tasks import background_task
from runs.hub.push import PUSH_TASK, push_checkpoint


@background_task(PUSH_TASK)
def push_checkpoint_task(push_id: int, sealed_token: str) -> None:
    push_checkpoint(push_id, sealed_token, files_of)
