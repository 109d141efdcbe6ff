"""The worker's side of "the fleet, seen": a Celery inspect command that answers what this worker
consumes, runs and runs on (worker.announcement.Announcement), so that the control plane learns it
through Celery's own broadcast inspection, from every live worker at once, with no registry of
its own. `celery -A worker.celery_app inspect grpo_announce` asks by hand.

The queues and the running tasks are read with Celery's own `active_queues` and `active`
inspections; the devices are probed once, in the background, after the worker is ready.
"""
import logging
import threading

from celery.signals import worker_ready
from celery.worker.control import active, active_queues, inspect_command

from worker.announcement import Announcement, BusyRun
from worker.broker import ANNOUNCE_COMMAND, EXECUTE_RUN
from worker.devices import Devices, probe_in_child

log = logging.getLogger(__name__)


class DeviceProbe:
    """This worker's devices, looked for once in a thread: the probe imports torch in a child
    process (seconds), which must not delay the worker's start nor an inspection's answer."""

    def __init__(self):
        self.devices: Devices | None = None
        self._started = threading.Event()

    def start(self) -> None:
        if not self._started.is_set():
            self._started.set()
            threading.Thread(target=self._probe, name="device-probe", daemon=True).start()

    def _probe(self) -> None:
        self.devices = probe_in_child()
        log.info("devices: %s", self.devices.to_dict())


PROBE = DeviceProbe()


@worker_ready.connect
def _probe_devices(**_):
    PROBE.start()


def busy_runs(active_tasks: list[dict]) -> tuple[BusyRun, ...]:
    """The runs among the tasks Celery's `active` inspection lists: execute_run's first argument is
    the run id (worker/tasks.py). The launch spec, its second, stays here: it is large."""
    return tuple(BusyRun(run_id=int(task["args"][0]), since=task.get("time_start"))
                 for task in active_tasks if task.get("name") == EXECUTE_RUN and task.get("args"))


@inspect_command(name=ANNOUNCE_COMMAND)
def announce(state, **_) -> dict:
    """What the control plane's Workers page and creation checks read (runs/fleet/)."""
    queues = tuple(queue["name"] for queue in active_queues(state))
    return Announcement(queues=queues, runs=busy_runs(active(state)), devices=PROBE.devices).to_dict()
