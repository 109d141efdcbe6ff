"""The Workers page (/workers/): each live Celery worker, its pools, devices and runs (runs/fleet/),
and for a worker whose pool is a Ray cluster, that cluster's machines, as the API's
GET /api/workers/ gives them. Server-rendered: it is a snapshot, reloaded to refresh."""
from dataclasses import dataclass

from django.contrib.auth.decorators import login_required
from django.shortcuts import render
from django.urls import path

from runs.fleet.asking import CACHE_S, INSPECT_TIMEOUT_S, current_fleet
from runs.fleet.records import LiveWorker
from runs.fleet.seen_by import busy_runs, cluster_nodes, visible_run_names
from worker.devices import Devices

MIB_PER_GIB = 1024


def gib(mib: int) -> str:
    return f"{mib / MIB_PER_GIB:.0f} GiB" if mib >= 10 * MIB_PER_GIB else f"{mib / MIB_PER_GIB:.1f} GiB"


def devices_text(devices: Devices | None) -> list[str]:
    """One line per GPU, then the CPU cores and RAM (which a CPU worker runs on)."""
    if devices is None:
        return []
    gpus = [f"GPU {gpu.index}: {gpu.name}, {gib(gpu.memory_mib)}" for gpu in devices.gpus]
    return [*gpus, f"{devices.cpu_cores} CPU cores, {gib(devices.memory_mib)} RAM"]


@dataclass(frozen=True)
class WorkerRow:
    worker: LiveWorker
    devices: list[str]
    runs: list[dict]  # {"id", "name", "since"}; id None: another account's run
    nodes: list[dict]  # its Ray cluster's machines (seen_by.cluster_nodes); empty for a worker that is not a Ray pool


def amount(number: float) -> str:
    """A Ray resource count as a person reads it: 2, not 2.0; 0.5 stays 0.5."""
    return f"{number:g}"


def node_row(node: dict) -> dict:
    return {**node, "cpus_text": f"{amount(node['cpus_free'])} / {amount(node['cpus'])}",
            "gpus_text": f"{amount(node['gpus_free'])} / {amount(node['gpus'])}",
            "memory_text": f"{node['memory_gib']:.1f} GiB"}


def worker_rows(fleet, user) -> list[WorkerRow]:
    names = visible_run_names(fleet, user)
    return [WorkerRow(worker, devices_text(worker.devices), busy_runs(worker, names),
                      [node_row(node) for node in cluster_nodes(worker, names)]) for worker in fleet.workers]


@login_required
def workers_page(request):
    fleet = current_fleet()
    rows = worker_rows(fleet, request.user)
    return render(request, "fleet/workers.html", {
        "fleet": fleet, "rows": rows, "clusters": [row for row in rows if row.worker.cluster],
        "timeout_s": INSPECT_TIMEOUT_S, "cache_s": CACHE_S,
    })


urlpatterns = [path("workers/", workers_page, name="page-workers")]
