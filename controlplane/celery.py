"""The control plane's Celery app: the web process sends with it, `celery -A controlplane.celery worker
-Q controlplane,controlplane-user` consumes with it. Workers use worker.celery_app.

Importing this module sets Django up (unless it already is), so that a consumer started from the
command line has settings, models and the database before any task runs. The task modules
(runs/background/names.py: TASK_MODULES) are in `imports`, which only a worker imports at its start: the web
process sends tasks by name and never loads what they do.
"""
import os

from celery import Celery
from kombu import Exchange, Queue

# Before the app exists: Celery's Django fixup (closing database connections around each task,
# in each pool process) installs itself only when this is set.
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "controlplane.settings")


def ensure_django() -> None:
    """django.setup() once; not while Django is populating its apps (a task module imported then)."""
    from django.apps import apps

    if not apps.ready and not apps.loading:
        import django

        django.setup()


ensure_django()

from django.conf import settings  # noqa: E402

from runs.background.names import QUEUE, QUEUES, TASK_MODULES  # noqa: E402

app = Celery("controlplane")
app.conf.update(settings.CELERY)
app.conf.update(
    imports=list(TASK_MODULES),
    # A consumer started without -Q still takes only the control plane's queues (its own work and the
    # work users start: runs/background/names.py), never a run pool's.
    task_default_queue=QUEUE,
    # Each with an exchange and key of its own name, as Celery makes a queue it is only sent to: a
    # plain Queue(name) would take the default's exchange and key, and a message would reach both.
    task_queues=[Queue(name, Exchange(name, type="direct"), routing_key=name) for name in QUEUES],
    # The fleet page broadcasts to every worker on the broker and lists who answers: a consumer that
    # answered (with "no such command") would show as a run worker in trouble. It takes no commands.
    worker_enable_remote_control=False,
)
