"""The control plane's queue, its tasks' names and the modules that define them: what both the
sender (runs/background/tasks.py: enqueue) and the consumer's Celery app (controlplane/celery.py) read, in a
module of its own so that neither imports the other for them."""
QUEUE = "controlplane"
TASK_PREFIX = "runs.background."
# Modules whose @background_task functions the consumer registers (controlplane/celery.py).
TASK_MODULES: list[str] = [
    "runs.background.datasets",
    "runs.background.dry_runs",
    "runs.background.reward_dry_runs",
    "runs.background.checkpoints",
    "runs.background.hub_push",
]


def task_name(name: str) -> str:
    return TASK_PREFIX + name
