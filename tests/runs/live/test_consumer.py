"""The run websocket consumer, through Channels' WebsocketCommunicator on the configured layer."""
import pytest
from asgiref.sync import sync_to_async
from channels.db import database_sync_to_async
from channels.layers import channel_layers
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import AnonymousUser

from controlplane.asgi import application
from runs.live.consumers import NOT_FOUND
from runs.live.events import LIVE_TYPES, publish
from runs.live.messages import HelloMessage, PongMessage, live_message_adapter
from tests.support.live_examples import wire_messages

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


async def receive_message(communicator, timeout=1):
    """The next frame, read as a typed live message (unknown fields would fail here)."""
    return live_message_adapter.validate_json(await communicator.receive_from(timeout=timeout))


async def publish_outside_a_transaction(message):
    # No transaction is open, so publish's on_commit sends at once; the sync side (as in a view)
    # reaches the channel layer through async_to_sync, as it does in production.
    await sync_to_async(publish)(message)


async def test_owner_connects_and_hears_where_the_run_stands(owner, run):
    communicator = connect_as(owner, run.pk)
    connected, _ = await communicator.connect()
    assert connected
    hello = await receive_message(communicator)
    assert hello == HelloMessage.of(run) and hello.payload.status == "created"
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
async def test_every_published_message_reaches_the_browser(owner, run, event_type):
    communicator = connect_as(owner, run.pk)
    await communicator.connect()
    await communicator.receive_from()  # hello
    message = live_message_adapter.validate_python(wire_messages(run.pk)[event_type])
    await publish_outside_a_transaction(message)
    assert await receive_message(communicator, timeout=5) == message
    await communicator.disconnect()


async def test_events_of_other_runs_are_not_forwarded(owner, run, dataset, config):
    other = await database_sync_to_async(run.__class__.objects.create)(
        owner=owner, name="other", dataset=dataset, config=dict(config.values))
    communicator = connect_as(owner, run.pk)
    await communicator.connect()
    await communicator.receive_from()
    await publish_outside_a_transaction(live_message_adapter.validate_python(wire_messages(other.pk)["run.log"]))
    assert await communicator.receive_nothing(timeout=0.3)
    await communicator.disconnect()


async def test_ping_is_answered(owner, run):
    communicator = connect_as(owner, run.pk)
    await communicator.connect()
    await communicator.receive_from()
    await communicator.send_json_to({"type": "ping"})
    assert await receive_message(communicator) == PongMessage()
    await communicator.disconnect()


async def test_cross_site_origin_is_refused(owner, run):
    communicator = WebsocketCommunicator(application, f"/ws/runs/{run.pk}/", headers=[(b"origin", b"http://evil.example")])
    communicator.scope["user"] = owner
    connected, _ = await communicator.connect()
    assert not connected
