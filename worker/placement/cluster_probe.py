"""Reads a Ray cluster as the fleet shows it: `python -m worker.placement.cluster_probe --address A`
prints a worker.cluster_view.ClusterView as one line of JSON.

Ray is initialised only in this child process, never in the Celery worker that asks
(`view_in_child`): Ray does not survive the fork of the next task. A node's runs are the runs
whose placement groups (named by worker/placement/names.py) hold bundles on it; groups of
anyone else on the cluster are not ours to show.
"""
import argparse
import json
import logging
import subprocess
import sys
from pathlib import Path

from worker.cluster_view import ClusterNode, ClusterView
from worker.placement.cluster_door import Door, door_of
from worker.placement.names import NAMESPACE, machine_name, run_of_placement_group

PROJECT_ROOT = Path(__file__).resolve().parents[2]  # where `-m worker.placement.cluster_probe` is found
GIB = 1024 ** 3
GONE = ("REMOVED",)  # placement group states that hold nothing


def runs_per_node(groups: dict) -> dict[str, tuple[int, ...]]:
    """{node id: run ids} from `ray.util.placement_group_table()`: each of our runs' groups that
    still holds bundles, by the nodes its bundles are on."""
    held: dict[str, set[int]] = {}
    for group in groups.values():
        run = run_of_placement_group(group.get("name") or "")
        if run is None or group.get("state") in GONE:
            continue
        for node_id in (group.get("bundles_to_node_id") or {}).values():
            if node_id:
                held.setdefault(node_id, set()).add(run[0])
    return {node_id: tuple(sorted(runs)) for node_id, runs in held.items()}


def cluster_node(node: dict, free: dict, runs: dict[str, tuple[int, ...]]) -> ClusterNode:
    """One entry of `ray.nodes()` with what it has free (`available_resources_per_node()`)."""
    total, left = node.get("Resources") or {}, free.get(node["NodeID"], {})
    alive = bool(node.get("Alive"))
    return ClusterNode(name=machine_name(node), node_id=node["NodeID"], address=str(node.get("NodeManagerAddress", "")),
                       alive=alive, cpus=float(total.get("CPU", 0.0)),
                       cpus_free=float(left.get("CPU", 0.0)) if alive else 0.0, gpus=float(total.get("GPU", 0.0)),
                       gpus_free=float(left.get("GPU", 0.0)) if alive else 0.0,
                       memory_gib=round(float(total.get("memory", 0.0)) / GIB, 2), runs=runs.get(node["NodeID"], ()))


def read_cluster(address: str) -> ClusterView:
    """The cluster at `address`, read through Ray (this process joins the cluster as a driver)."""
    import ray
    from ray._private.state import available_resources_per_node  # no public per-node view without the dashboard
    from ray.util import placement_group_table

    ray.init(address=address, namespace=NAMESPACE, logging_level=logging.ERROR, log_to_driver=False)
    try:
        runs = runs_per_node(placement_group_table())
        free = available_resources_per_node()
        nodes = (cluster_node(node, free, runs) for node in ray.nodes())
        door = door_of(ray.get_runtime_context().gcs_address)
        return ClusterView(address=address, nodes=tuple(sorted(nodes, key=lambda node: (node.name, node.node_id))),
                           open_to_anyone=None if door is Door.UNREADABLE else door is Door.OPEN)
    finally:
        ray.shutdown()


def view_in_child(address: str, timeout_s: float = 60.0) -> ClusterView:
    """`read_cluster` in a child process; a cluster that cannot be read is a view saying why."""
    command = [sys.executable, "-m", "worker.placement.cluster_probe", "--address", address]
    try:
        done = subprocess.run(command, capture_output=True, text=True, cwd=PROJECT_ROOT, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return ClusterView.unreadable(address, f"the Ray cluster at {address} did not answer within {timeout_s:g} s")
    except OSError as exc:
        return ClusterView.unreadable(address, f"the cluster probe could not start: {exc}")
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return ClusterView.unreadable(address, f"the Ray cluster at {address} could not be read: {tail}")
    try:
        return ClusterView.from_dict(json.loads(lines[-1]))
    except (ValueError, KeyError, TypeError) as exc:
        return ClusterView.unreadable(address, f"the cluster probe answered something else: {exc}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--address", required=True, help="the Ray cluster's address, as WORKER_RAY_ADDRESS gives it")
    address = parser.parse_args(argv).address
    try:
        view = read_cluster(address)
    except Exception as exc:  # any failure of Ray's is shown to a person as the reason
        view = ClusterView.unreadable(address, f"the Ray cluster at {address} could not be read: "
                                               f"{type(exc).__name__}: {exc}")
    print(json.dumps(view.to_dict()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
