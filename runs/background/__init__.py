"""Slow work of the control plane, outside any request: the queues its tasks go through.

A request that would hash, copy, push or load for longer than a page should wait records what
is to be done, calls `enqueue` (tasks.py) and answers at once; a consumer of the `controlplane` queue
(`celery -A controlplane.celery worker -Q controlplane`, started by `make run`) does the work
with Django and the database at hand, and reports progress on the object it works on. The
workers' app (worker.celery_app) never sees these tasks: it consumes the run pools' queues.

Tasks are plain functions registered with `@background_task("name")` (tasks.py) in a domain's
tasks.py listed in TASK_MODULES (names.py); they take JSON arguments (ids, not objects) and must be safe
to run twice (a consumer lost mid-task has the message delivered again).
"""
