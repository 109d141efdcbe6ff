"""The cluster probe against a real one-node Ray cluster: it names the machine by its label, counts
its resources, and tells which of our runs hold it. Ray runs only in child processes here."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.ray_cluster import start_ray_cluster
from worker.cluster_view import ClusterView
from worker.placement.cluster_probe import runs_per_node, view_in_child
from worker.placement.names import NAMESPACE, placement_group_name

REPO_ROOT = Path(__file__).resolve().parents[3]

# Holds a placement group of run 42 (attempt 1) and one of somebody else until stdin closes.
HOLD_GROUPS = """
import sys, ray
from ray.util.placement_group import placement_group
ray.init(address=sys.argv[1], namespace=sys.argv[3], logging_level="ERROR")
ours = placement_group([{"CPU": 1}], strategy="STRICT_PACK", name=sys.argv[2])
theirs = placement_group([{"CPU": 0.5}], name="somebody-elses-group")
assert ours.wait(60) and theirs.wait(60)
print("held", flush=True)
sys.stdin.read()
"""


@pytest.fixture(scope="module")
def cluster():
    ray_cluster = start_ray_cluster(nodes=((2, 0),))
    yield ray_cluster
    ray_cluster.stop()


@pytest.fixture
def groups_held(cluster):
    holder = subprocess.Popen([sys.executable, "-c", HOLD_GROUPS, cluster.address, placement_group_name(42, 1),
                               NAMESPACE], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=REPO_ROOT)
    try:
        assert holder.stdout.readline().strip() == "held"
        yield
    finally:
        holder.stdin.close()
        holder.wait(timeout=60)


def test_the_probe_names_the_node_by_its_label_with_its_resources(cluster):
    done = subprocess.run([sys.executable, "-m", "worker.placement.cluster_probe", "--address", cluster.address],
                          capture_output=True, text=True, cwd=REPO_ROOT, timeout=120, check=True)
    view = ClusterView.from_dict(json.loads(done.stdout.strip().splitlines()[-1]))
    assert view.error is None and view.address == cluster.address
    [node] = view.nodes
    assert (node.name, node.alive) == ("node-a", True)
    assert node.address  # the node's IP as Ray reports it (what Ray takes for this host's, not always 127.0.0.1)
    assert (node.cpus, node.gpus) == (2.0, 0.0)
    assert node.memory_gib > 0 and len(node.node_id) == 56
    assert view.open_to_anyone is False  # its nodes ask a token (tests/support/ray_cluster.py)


def test_a_node_held_by_a_run_lists_that_run_and_has_less_free(cluster, groups_held):
    [node] = view_in_child(cluster.address).nodes
    assert node.runs == (42,)
    assert node.cpus_free == pytest.approx(0.5)


def test_a_cluster_that_cannot_be_reached_is_a_view_saying_why():
    view = view_in_child("127.0.0.1:1", timeout_s=3)
    assert view.nodes == () and "127.0.0.1:1" in view.error


def test_only_our_runs_placement_groups_count_and_removed_ones_hold_nothing():
    table = {"g1": {"name": "grpo-run-7-a2", "state": "CREATED", "bundles_to_node_id": {0: "n1"}},
             "g2": {"name": "grpo-run-8-a1", "state": "REMOVED", "bundles_to_node_id": {0: "n1"}},
             "g3": {"name": "not-ours", "state": "CREATED", "bundles_to_node_id": {0: "n1"}},
             "g4": {"name": "grpo-run-9-a1", "state": "CREATED", "bundles_to_node_id": {0: "n2", 1: "n1"}}}
    assert runs_per_node(table) == {"n1": (7, 9), "n2": (9,)}
