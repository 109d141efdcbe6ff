"""Hands a started run to the worker pool, once the transaction that started it commits."""
from django.db import transaction

from worker.broker import EXECUTE_RUN


def enqueue_execute_run(run_id: int, spec: dict, queue: str) -> None:
    # Imported here so that importing runs never configures Celery as a side effect.
    from controlplane.celery import app

    transaction.on_commit(lambda: app.send_task(EXECUTE_RUN, args=[run_id, spec], queue=queue))
