"""The worker's announce command: registered with Celery's inspection, it answers the queues it
consumes, the runs it is busy with (from Celery's `active`) and its devices once probed."""
import time

import celery.worker.control  # noqa: F401 (registers Celery's own commands first)
from celery.worker.control import Panel

import worker.celery_app  # noqa: F401 (the app a worker runs, which registers the command)
from worker import inspection
from worker.announcement import Announcement, BusyRun
from worker.broker import ANNOUNCE_COMMAND, EXECUTE_RUN
from worker.devices import Devices

# Celery's `active` inspection, as a worker answers it (request.info()).
RUNNING = {"id": "6f1c", "name": EXECUTE_RUN, "args": [12, {"run_id": 12, "config": {"big": "spec"}}], "kwargs": {},
           "type": EXECUTE_RUN, "hostname": "celery@gpu-1", "time_start": 1764000000.5, "acknowledged": True,
           "delivery_info": {"routing_key": "gpu"}, "worker_pid": 4242}


def test_the_command_is_one_of_celerys_inspect_commands():
    assert ANNOUNCE_COMMAND in Panel.data
    assert Panel.meta[ANNOUNCE_COMMAND].type == "inspect"


def test_busy_runs_are_the_run_ids_of_running_execute_run_tasks():
    other = {**RUNNING, "name": "celery.backend_cleanup", "args": []}
    assert inspection.busy_runs([RUNNING, other]) == (BusyRun(run_id=12, since=1764000000.5),)


def test_the_announcement_names_queues_runs_and_devices(monkeypatch):
    monkeypatch.setattr(inspection, "active_queues", lambda state: [{"name": "gpu"}, {"name": "default"}])
    monkeypatch.setattr(inspection, "active", lambda state: [RUNNING])
    monkeypatch.setattr(inspection.PROBE, "devices", Devices(gpus=(), cpu_cores=8, memory_mib=32000, source="none"))
    answer = inspection.announce(state=None)
    assert answer == {"queues": ["gpu", "default"], "runs": [{"run_id": 12, "since": 1764000000.5}],
                      "devices": {"kind": "cpu", "gpus": [], "cpu_cores": 8, "memory_mib": 32000, "source": "none"}}
    assert Announcement.from_dict(answer).runs == (BusyRun(12, 1764000000.5),)
    assert "spec" not in str(answer)  # the launch spec stays on the worker


def test_before_the_probe_ends_the_devices_are_unknown(monkeypatch):
    monkeypatch.setattr(inspection, "active_queues", lambda state: [{"name": "default"}])
    monkeypatch.setattr(inspection, "active", lambda state: [])
    monkeypatch.setattr(inspection.PROBE, "devices", None)
    assert inspection.announce(state=None)["devices"] is None


def test_the_probe_runs_once_in_the_background(monkeypatch):
    calls = []
    found = Devices(gpus=(), cpu_cores=2, memory_mib=1000, source="none")
    monkeypatch.setattr(inspection, "probe_in_child", lambda: calls.append(1) or found)
    probe = inspection.DeviceProbe()
    probe.start()
    probe.start()
    for _ in range(200):
        if probe.devices is not None:
            break
        time.sleep(0.01)
    assert probe.devices == found and calls == [1]
