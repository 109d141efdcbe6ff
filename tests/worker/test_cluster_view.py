"""A cluster view survives the trip through an announcement's JSON, as the control plane reads it."""
import json

import pytest

from worker.announcement import Announcement, BusyRun
from worker.cluster_view import ClusterNode, ClusterView

NODE_A = ClusterNode(name="node-a", node_id="ab" * 28, address="10.0.0.1", alive=True, cpus=8.0, cpus_free=7.0,
                     gpus=4.0, gpus_free=2.0, memory_gib=62.5, runs=(3, 7))
NODE_B = ClusterNode(name="node-b", node_id="cd" * 28, address="10.0.0.2", alive=False, cpus=4.0, cpus_free=0.0,
                     gpus=0.0, gpus_free=0.0, memory_gib=15.0)


def through_json(data: dict) -> dict:
    return json.loads(json.dumps(data))


@pytest.mark.parametrize("open_to_anyone", [True, False, None])
def test_a_cluster_view_round_trips_through_json(open_to_anyone):
    view = ClusterView(address="10.0.0.1:6379", nodes=(NODE_A, NODE_B), open_to_anyone=open_to_anyone)
    assert ClusterView.from_dict(through_json(view.to_dict())) == view


def test_a_view_from_a_worker_that_did_not_ask_the_door_says_nothing_of_it():
    older = through_json(ClusterView(address="10.0.0.1:6379", nodes=(NODE_A,)).to_dict())
    del older["open_to_anyone"]
    assert ClusterView.from_dict(older).open_to_anyone is None


def test_an_unreadable_cluster_keeps_its_reason_and_has_no_nodes():
    view = ClusterView.unreadable("10.0.0.1:6379", "the Ray cluster at 10.0.0.1:6379 did not answer within 30 s")
    back = ClusterView.from_dict(through_json(view.to_dict()))
    assert back.nodes == () and back.error == view.error


def test_alive_nodes_leave_out_lost_machines():
    assert ClusterView(address="a:1", nodes=(NODE_A, NODE_B)).alive_nodes == (NODE_A,)


def test_an_announcement_carries_its_cluster_and_a_plain_worker_none():
    view = ClusterView(address="10.0.0.1:6379", nodes=(NODE_A,))
    announced = Announcement(queues=("ray",), runs=(BusyRun(3, 1.5),), devices=None, cluster=view)
    assert Announcement.from_dict(through_json(announced.to_dict())).cluster == view
    plain = Announcement(queues=("default",), runs=(), devices=None)
    assert Announcement.from_dict(through_json(plain.to_dict())).cluster is None


def test_an_announcement_from_an_older_worker_without_a_cluster_reads_as_none():
    assert Announcement.from_dict({"queues": ["default"], "runs": [], "devices": None}).cluster is None


def test_a_node_without_its_numbers_is_not_a_cluster_view():
    with pytest.raises(KeyError):
        ClusterView.from_dict({"address": "a:1", "nodes": [{"name": "node-a"}]})
