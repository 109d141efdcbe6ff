"""The control plane's Celery app (controlplane/celery.py): the web process sends with it without loading
any task; a consumer started with it has Django set up and every task of TASK_MODULES registered."""
import json
import subprocess
import sys

from runs.background.names import QUEUE, QUEUES, TASK_MODULES, task_name
from scripts.run_local import BACKGROUND_QUEUE, BACKGROUND_QUEUES, consumer_args
from tests.support.asgi_server import ROOT

LOADED = """
import json, sys
from controlplane.celery import app
from runs.background.names import TASK_MODULES
before = [name for name in TASK_MODULES if name in sys.modules]
app.loader.import_default_modules()  # what `celery worker` does at its start
print(json.dumps({"before": before, "after": [name for name in TASK_MODULES if name in sys.modules],
                  "tasks": sorted(name for name in app.tasks if name.startswith("runs.background.")),
                  "queue": app.conf.task_default_queue, "queues": [q.name for q in app.conf.task_queues],
                  "remote_control": app.conf.worker_enable_remote_control}))
"""


def app_as_a_fresh_process_sees_it(tmp_path) -> dict:
    # Only DJANGO_SETTINGS_MODULE unset and a data dir of its own: nothing else tells it Django is there.
    env = {"PATH": "/usr/bin:/bin", "GRPO_DOTENV": "0", "DATA_DIR": str(tmp_path)}
    result = subprocess.run([sys.executable, "-c", LOADED], cwd=ROOT, env=env, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_importing_the_app_sets_django_up_and_loads_tasks_only_when_a_worker_starts(tmp_path):
    seen = app_as_a_fresh_process_sees_it(tmp_path)
    assert seen["before"] == []
    assert seen["after"] == TASK_MODULES
    assert task_name("push_checkpoint") in seen["tasks"]


def test_a_consumer_takes_only_the_control_plane_queue_and_no_broadcast_commands(tmp_path):
    seen = app_as_a_fresh_process_sees_it(tmp_path)
    assert seen["queue"] == QUEUE and seen["queues"] == list(QUEUES)
    assert seen["remote_control"] is False  # the fleet page lists whoever answers a broadcast


def test_make_run_starts_the_consumer_on_the_queues_tasks_are_sent_to():
    assert BACKGROUND_QUEUE == QUEUE and BACKGROUND_QUEUES.split(",") == list(QUEUES)
    assert consumer_args(1)[consumer_args(1).index("-Q") + 1] == BACKGROUND_QUEUES
