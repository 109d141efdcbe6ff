"""Sending a task to the control plane's consumer (`enqueue`) and registering one (`background_task`);
the Celery app is imported only when one is sent or registered, so importing runs configures no Celery."""
from django.db import transaction

from runs.background.names import queue_for, task_name


def enqueue(name: str, *args) -> None:
    """Sends task `name` with `args`, to its queue (names.py), once the current transaction commits
    (at once outside one)."""
    # Imported here so that importing runs never configures Celery as a side effect.
    from controlplane.celery import app

    transaction.on_commit(lambda: app.send_task(task_name(name), args=list(args), queue=queue_for(name)))


def background_task(name: str):
    """Registers the decorated function as the control plane's task `name`."""
    def register(function):
        from controlplane.celery import app

        return app.task(name=task_name(name), bind=False)(function)
    return register
