"""`grpo workers list`: the live workers, their pools, devices and the runs they are busy with."""
import argparse

from client.api import ControlPlane
from client.cli.output import Subparsers, add_list_verb, print_json
from client.session import Json
from client.tables import print_table


def add_parser(areas: Subparsers) -> None:
    workers = areas.add_parser("workers", help="the live workers")
    verbs = workers.add_subparsers(required=True, metavar="{list}")
    add_list_verb(verbs, "each live worker: pools, devices, runs, when last heard from", list_workers, paged=False)


def list_workers(api: ControlPlane, args: argparse.Namespace) -> None:
    fleet = api.workers()
    if args.json:
        return print_json(fleet)
    if not fleet["workers"]:
        print(f"no live worker answered (asked at {fleet['asked_at']})")
        return
    print_table(("worker", "pools", "devices", "runs", "heard"),
                [(w["name"], ",".join(w["queues"]), devices(w["devices"]), runs(w["runs"]), w["heard_at"])
                 for w in fleet["workers"]])


def devices(found: Json) -> str:
    if not found:
        return "?"
    if found["kind"] == "gpu":
        return ", ".join(f"{gpu['name']} {gpu['memory_mib'] // 1024} GiB" for gpu in found["gpus"])
    return f"{found['cpu_cores']} cores, {found['memory_mib'] // 1024} GiB"


def runs(busy: list[Json]) -> str:
    return ", ".join(str(run["id"]) if run["id"] is not None else "another's" for run in busy) or "idle"
