"""The control plane's queues, its tasks' names and the modules that define them: what both the
sender (runs/background/tasks.py: enqueue) and the consumer's Celery app (controlplane/celery.py) read, in a
module of its own so that neither imports the other for them."""
# Two queues, one consumer (`-Q controlplane,controlplane-user`): the control plane's own work
# (finishing a worker's checkpoint upload) never waits behind work users start (dry runs, Hub
# pushes, dataset checks), of which each account has a bounded number unfinished (limits.py).
# Kombu polls a consumer's queues in turn, so each gets the next free process alternately.
QUEUE = "controlplane"
USER_QUEUE = "controlplane-user"
QUEUES = (QUEUE, USER_QUEUE)
OWN_TASKS = frozenset({"finalize_checkpoint"})  # runs.checkpoints.finishing.FINALIZE_TASK
TASK_PREFIX = "runs.background."
# Modules whose @background_task functions the consumer registers (controlplane/celery.py).
TASK_MODULES: list[str] = [
    "runs.datasets.tasks",
    "runs.rewards.tasks",
    "runs.environments.tasks",
    "runs.checkpoints.tasks",
    "runs.hub.tasks",
]


def task_name(name: str) -> str:
    return TASK_PREFIX + name


def queue_for(name: str) -> str:
    """Where task `name` is sent: the control plane's own queue, or the one for work users start."""
    return QUEUE if name in OWN_TASKS else USER_QUEUE
