"""Which of the control plane's two queues each task goes to: finishing a worker's checkpoint never
waits behind the work users start (runs/background/names.py)."""
from runs.checkpoints.finishing import FINALIZE_TASK
from runs.hub.push import PUSH_TASK
from runs.background.names import QUEUE, USER_QUEUE, queue_for
from runs.datasets import deferred_check
from runs.environments import model_dry_run as environment_dry_run
from runs.rewards import model_dry_run as reward_dry_run


def test_checkpoint_finishing_has_the_control_planes_own_queue():
    assert queue_for(FINALIZE_TASK) == QUEUE


def test_work_users_start_goes_to_the_other_queue():
    for name in (PUSH_TASK, deferred_check.TASK, environment_dry_run.TASK, reward_dry_run.TASK):
        assert queue_for(name) == USER_QUEUE, name
