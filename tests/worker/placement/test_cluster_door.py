"""The door of a real Ray cluster, asked without a token: open, shut to callers without the token,
or nobody there."""
import pytest

from tests.support.asgi_server import free_port
from worker.placement.cluster_door import Door, door_of

pytest.importorskip("ray")


def test_a_cluster_started_without_a_token_is_open(open_cluster):
    assert door_of(open_cluster.address) is Door.OPEN


def test_a_cluster_that_asks_a_token_turns_away_a_caller_without_it(cluster):
    assert door_of(cluster.address) is Door.TOKEN


def test_an_address_where_no_cluster_listens_says_nothing_of_a_door():
    assert door_of(f"127.0.0.1:{free_port()}", timeout_s=2) is Door.UNREADABLE
