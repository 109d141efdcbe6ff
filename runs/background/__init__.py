"""Slow work of the control plane, outside any request: Celery tasks on the `controlplane` queue.

A request that would hash, copy, push or load for longer than a page should wait records what
is to be done, calls `enqueue` and answers at once; a consumer of the `controlplane` queue
(`celery -A controlplane.celery worker -Q controlplane`, started by `make run`) does the work
with Django and the database at hand, and reports progress on the object it works on. The
workers' app (worker.celery_app) never sees these tasks: it consumes the run pools' queues.

Tasks are plain functions registered with `@background_task("name")` in a module of this
package listed in TASK_MODULES; they take JSON arguments (ids, not objects) and must be safe
to run twice (a consumer lost mid-task has the message delivered again).
"""
from django.db import transaction

from runs.background.names import QUEUE, TASK_MODULES, task_name

__all__ = ["QUEUE", "TASK_MODULES", "background_task", "enqueue", "task_name"]


def enqueue(name: str, *args) -> None:
    """Sends task `name` with `args` once the current transaction commits (at once outside one)."""
    # Imported here so that importing runs never configures Celery as a side effect.
    from controlplane.celery import app

    transaction.on_commit(lambda: app.send_task(task_name(name), args=list(args), queue=QUEUE))


def background_task(name: str):
    """Registers the decorated function as the control plane's task `name`."""
    def register(function):
        from controlplane.celery import app

        return app.task(name=task_name(name), bind=False)(function)
    return register
