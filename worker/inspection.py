"""The worker's side of "the fleet, seen": a Celery inspect command that answers what this worker
consumes, runs and runs on (worker.announcement.Announcement), so that the control plane learns it
through Celery's own broadcast inspection, from every live worker at once, with no registry of
its own. `celery -A worker.celery_app inspect grpo_announce` asks by hand.

The queues and the running tasks are read with Celery's own `active_queues` and `active`
inspections; the devices are probed once, in the background, after the worker is ready; a pool
that is a Ray cluster (WORKER_RAY_ADDRESS) is read in the background too, again when an
inspection finds the last reading older than CLUSTER_REFRESH_S.
"""
import logging
import threading
import time

from celery.signals import worker_ready
from celery.worker.control import active, active_queues, inspect_command

from worker.announcement import Announcement, BusyRun
from worker.broker import ANNOUNCE_COMMAND, EXECUTE_RUN
from worker.cluster_view import ClusterView
from worker.devices import Devices, probe_in_child
from worker.placement.cluster_probe import view_in_child
from worker.settings import WorkerSettings

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
CLUSTER_REFRESH_S = 10.0  # a reading at most this old is announced as it is; an older one is read again


class ClusterProbe:
    """The Ray cluster this worker places runs on, read in a thread by a child process
    (worker/placement/cluster_probe.py): Ray is never initialised in the Celery process, and an
    inspection answers at once with the last reading rather than wait seconds for a new one."""

    def __init__(self, address: str | None, reader=view_in_child, clock=time.monotonic):
        self.address = address
        self.view: ClusterView | None = None if address is None else ClusterView.unreadable(
            address, "the worker is still reading the cluster (the first seconds after it starts)")
        self._reader, self._clock = reader, clock
        self._read_at: float | None = None
        self._reading = threading.Lock()

    def latest(self) -> ClusterView | None:
        """The last reading (None: this worker's pool is not a Ray cluster); starts a new one in the
        background when it is older than CLUSTER_REFRESH_S and none is under way."""
        if self.address is not None and self._stale() and self._reading.acquire(blocking=False):
            threading.Thread(target=self._read, name="cluster-probe", daemon=True).start()
        return self.view

    def _stale(self) -> bool:
        return self._read_at is None or self._clock() - self._read_at >= CLUSTER_REFRESH_S

    def _read(self) -> None:
        try:
            self.view = self._reader(self.address)
            self._read_at = self._clock()
        finally:
            self._reading.release()


CLUSTER: ClusterProbe | None = None  # made when the worker is ready, from its settings


@worker_ready.connect
def _probe_devices(**_):
    global CLUSTER
    PROBE.start()
    CLUSTER = ClusterProbe(WorkerSettings.from_env().ray_address)
    CLUSTER.latest()


def busy_runs(active_tasks: list[dict]) -> tuple[BusyRun, ...]:
    """The runs among the tasks Celery's `active` inspection lists: execute_run's first argument is
    the run id (worker/tasks.py). The launch spec, its second, stays here: it is large."""
    return tuple(BusyRun(run_id=int(task["args"][0]), since=task.get("time_start"))
                 for task in active_tasks if task.get("name") == EXECUTE_RUN and task.get("args"))


@inspect_command(name=ANNOUNCE_COMMAND)
def announce(state, **_) -> dict:
    """What the control plane's Workers page and creation checks read (runs/fleet/)."""
    queues = tuple(queue["name"] for queue in active_queues(state))
    cluster = CLUSTER.latest() if CLUSTER is not None else None
    return Announcement(queues=queues, runs=busy_runs(active(state)), devices=PROBE.devices,
                        cluster=cluster).to_dict()
