"""The run websocket consumer, through Channels' WebsocketCommunicator on the configured layer."""
import json

import pytest
from channels.db import database_sync_to_async
from channels.layers import channel_layers, get_channel_layer
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import AnonymousUser

from controlplane.asgi import application
from runs.consumers import NOT_FOUND
from runs.events import LIVE_TYPES, run_group

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def fresh_channel_layer():
    """A layer per test: each async test has its own event loop, and channels_redis
    binds its connections and locks to the loop that first used them."""
    channel_layers.backends.clear()
    yield
    channel_layers.backends.clear()


def connect_as(user, run_id):
    communicator = WebsocketCommunicator(application, f"/ws/runs/{run_id}/",
                                         headers=[(b"origin", b"http://127.0.0.1:8000")])
    # Skip the session lookup: tell the auth middleware who is connecting.
    communicator.scope["user"] = user
    return communicator


async def test_owner_connects_and_hears_where_the_run_stands(owner, run):
    communicator = connect_as(owner, run.pk)
    connected, _ = await communicator.connect()
    assert connected
    hello = await communicator.receive_json_from()
    assert hello["type"] == "run.hello" and hello["payload"]["status"] == "created"
    await communicator.disconnect()


@pytest.mark.parametrize("who", ["other", "anonymous"])
async def test_users_who_may_not_see_the_run_are_refused(other_user, run, who):
    user = other_user if who == "other" else AnonymousUser()
    communicator = connect_as(user, run.pk)
    connected, code = await communicator.connect()
    assert not connected and code == NOT_FOUND


async def test_unknown_run_is_refused_like_a_foreign_one(owner):
    connected, code = await connect_as(owner, 987654).connect()
    assert not connected and code == NOT_FOUND


async def test_staff_may_watch_any_run(staff_user, run):
    communicator = connect_as(staff_user, run.pk)
    connected, _ = await communicator.connect()
    assert connected
    await communicator.disconnect()


@pytest.mark.parametrize("event_type", LIVE_TYPES)
async def test_every_live_event_type_is_forwarded(owner, run, event_type):
    communicator = connect_as(owner, run.pk)
    await communicator.connect()
    await communicator.receive_json_from()  # hello
    text = json.dumps({"type": event_type, "run": run.pk, "payload": {"x": 1}})
    await get_channel_layer().group_send(run_group(run.pk), {"type": event_type, "text": text})
    message = await communicator.receive_json_from(timeout=5)
    assert message == {"type": event_type, "run": run.pk, "payload": {"x": 1}}
    await communicator.disconnect()


async def test_events_of_other_runs_are_not_forwarded(owner, run, dataset, config):
    other = await database_sync_to_async(run.__class__.objects.create)(
        owner=owner, name="other", dataset=dataset, config=dict(config.values))
    communicator = connect_as(owner, run.pk)
    await communicator.connect()
    await communicator.receive_json_from()
    await get_channel_layer().group_send(run_group(other.pk), {"type": "run.log", "text": "{}"})
    assert await communicator.receive_nothing(timeout=0.3)
    await communicator.disconnect()


async def test_ping_is_answered(owner, run):
    communicator = connect_as(owner, run.pk)
    await communicator.connect()
    await communicator.receive_json_from()
    await communicator.send_json_to({"type": "ping"})
    assert await communicator.receive_json_from() == {"type": "pong"}
    await communicator.disconnect()


async def test_cross_site_origin_is_refused(owner, run):
    communicator = WebsocketCommunicator(application, f"/ws/runs/{run.pk}/", headers=[(b"origin", b"http://evil.example")])
    communicator.scope["user"] = owner
    connected, _ = await communicator.connect()
    assert not connected
