"""The attack: keep a run page's websocket open after losing the run, and go on hearing it.

Each test opens the socket with a real session cookie (through the project's ASGI app and its
auth middleware), then takes the access away: the account deactivated, staff removed, the session
logged out or deleted, the password changed, the run given away or deleted. The next event
published to the run must not arrive, and the socket must close with ACCESS_LOST.
"""
import pytest
from asgiref.sync import sync_to_async
from channels.layers import channel_layers
from channels.testing import WebsocketCommunicator
from django.contrib.auth import get_user_model
from django.contrib.sessions.models import Session
from django.test import Client

from controlplane.asgi import application
from runs.live.consumers import ACCESS_LOST
from runs.live.events import publish
from runs.live.messages import live_message_adapter
from runs.training_runs.models import Run
from tests.support.live_examples import wire_messages

pytestmark = pytest.mark.django_db(transaction=True)

User = get_user_model()


@pytest.fixture(autouse=True)
def fresh_channel_layer():
    channel_layers.backends.clear()
    yield
    channel_layers.backends.clear()


@pytest.fixture
def signals_only(settings):
    """No periodic re-check within the test: what closes the socket is the change itself."""
    settings.LIVE_ACCESS_RECHECK_S = 3600


@pytest.fixture
def every_message(settings):
    """A re-check before every message: what closes the socket without any signal."""
    settings.LIVE_ACCESS_RECHECK_S = 0


def logged_in_client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


async def open_socket(client: Client, run_id: int) -> WebsocketCommunicator:
    cookie = f"sessionid={client.cookies['sessionid'].value}".encode()
    communicator = WebsocketCommunicator(application, f"/ws/runs/{run_id}/",
                                         headers=[(b"origin", b"http://127.0.0.1:8000"), (b"cookie", cookie)])
    connected, _ = await communicator.connect()
    assert connected
    await communicator.receive_from()  # hello
    return communicator


async def publish_log(run_id: int):
    message = live_message_adapter.validate_python(wire_messages(run_id)["run.log"])
    await sync_to_async(publish)(message)
    return message


async def hears_nothing_then_closes(communicator: WebsocketCommunicator, run_id: int) -> None:
    await publish_log(run_id)
    output = await communicator.receive_output(timeout=5)
    assert output == {"type": "websocket.close", "code": ACCESS_LOST}, output
    assert await communicator.receive_nothing(timeout=0.3)


async def still_hears(communicator: WebsocketCommunicator, run_id: int) -> None:
    message = await publish_log(run_id)
    assert live_message_adapter.validate_json(await communicator.receive_from(timeout=5)) == message
    await communicator.disconnect()


def change(function):
    return sync_to_async(function)


async def test_a_deactivated_user_hears_no_more(owner, run, signals_only):
    communicator = await open_socket(await change(logged_in_client)(owner), run.pk)

    def deactivate():
        owner.is_active = False
        owner.save()
    await change(deactivate)()
    await hears_nothing_then_closes(communicator, run.pk)


async def test_a_user_deactivated_behind_the_models_back_hears_no_more(owner, run, every_message):
    communicator = await open_socket(await change(logged_in_client)(owner), run.pk)
    await change(lambda: User.objects.filter(pk=owner.pk).update(is_active=False))()
    await hears_nothing_then_closes(communicator, run.pk)


async def test_staff_who_lose_staff_hear_anothers_run_no_more(staff_user, run, signals_only):
    communicator = await open_socket(await change(logged_in_client)(staff_user), run.pk)

    def demote():
        staff_user.is_staff = False
        staff_user.save()
    await change(demote)()
    await hears_nothing_then_closes(communicator, run.pk)


async def test_a_logged_out_session_hears_no_more(owner, run, signals_only):
    client = await change(logged_in_client)(owner)
    communicator = await open_socket(client, run.pk)
    response = await change(client.post)("/logout/")
    assert response.status_code == 302
    await hears_nothing_then_closes(communicator, run.pk)


async def test_logging_out_elsewhere_leaves_this_session_listening(owner, run, signals_only):
    communicator = await open_socket(await change(logged_in_client)(owner), run.pk)
    elsewhere = await change(logged_in_client)(owner)
    await change(elsewhere.post)("/logout/")
    await still_hears(communicator, run.pk)


async def test_a_session_deleted_from_the_store_hears_no_more(owner, run, every_message):
    client = await change(logged_in_client)(owner)
    communicator = await open_socket(client, run.pk)
    key = client.cookies["sessionid"].value
    await change(lambda: Session.objects.filter(session_key=key).delete())()
    await hears_nothing_then_closes(communicator, run.pk)


async def test_a_changed_password_ends_the_old_sessions_socket(owner, run, signals_only):
    communicator = await open_socket(await change(logged_in_client)(owner), run.pk)

    def new_password():
        owner.set_password("a-new-password-4417")
        owner.save()
    await change(new_password)()
    await hears_nothing_then_closes(communicator, run.pk)


async def test_a_run_given_away_is_heard_no_more(owner, other_user, run, signals_only):
    communicator = await open_socket(await change(logged_in_client)(owner), run.pk)

    def give_away():
        given = Run.objects.get(pk=run.pk)
        given.owner = other_user
        given.save()
    await change(give_away)()
    await hears_nothing_then_closes(communicator, run.pk)


async def test_a_deleted_run_closes_its_sockets(owner, run, signals_only):
    communicator = await open_socket(await change(logged_in_client)(owner), run.pk)
    run_id = run.pk
    await change(lambda: Run.objects.get(pk=run_id).delete())()
    await hears_nothing_then_closes(communicator, run_id)


async def test_a_user_who_keeps_access_keeps_hearing(owner, run, every_message):
    communicator = await open_socket(await change(logged_in_client)(owner), run.pk)

    def rename():
        owner.first_name = "Renamed"
        owner.save()
    await change(rename)()
    await still_hears(communicator, run.pk)
