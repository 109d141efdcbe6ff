"""The one door to the live channel.

Everything a browser hears about a run passes through `publish`, and only
after the database transaction that stored it commits: a client that reacts
to a message by fetching over REST always finds the data there. What may be
published is a closed set of typed messages (runs.live.messages).
"""
from functools import partial

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import transaction

from runs.live.messages import PUBLISHED, PublishedMessage, RunState, message_type

LIVE_TYPES = tuple(message_type(model) for model in PUBLISHED)


def run_group(run_id: int) -> str:
    return f"run-{run_id}"


def publish(message: PublishedMessage) -> None:
    if not isinstance(message, PUBLISHED):
        names = ", ".join(model.__name__ for model in PUBLISHED)
        raise TypeError(f"publish takes a live message ({names}), not {type(message).__name__}")
    # Encoded once here, not once per connected browser; consumers forward the text as is.
    # The layer's `type` picks the consumer's handler (run.status -> run_status).
    envelope = {"type": message.type, "text": message.model_dump_json()}
    transaction.on_commit(lambda: _send(run_group(message.run), envelope))


def user_group(user_id: int) -> str:
    """Every run socket a user has open, whichever run: told when the user changes."""
    return f"user-{user_id}"


def ask_to_recheck_access(*, run_id: int | None = None, user_id: int | None = None) -> None:
    """After commit, tells the sockets of a run (given away, deleted) or of a user (deactivated,
    staff removed, password changed) to check again that their user may still see the run."""
    groups = [run_group(run_id)] if run_id is not None else []
    groups += [user_group(user_id)] if user_id is not None else []
    for group in groups:
        transaction.on_commit(partial(_send, group, {"type": "access.recheck"}))


def end_session_sockets(user_id: int, session_digest: str) -> None:
    """Closes the sockets opened with one session (logged out): named by a digest, not the key,
    so the channel layer (Redis) never carries a session key. Sent at once: the logout view
    flushes the session right after, and the socket needs no database to act on this."""
    _send(user_group(user_id), {"type": "access.session_ended", "session": session_digest})


def _send(group: str, message: dict) -> None:
    layer = get_channel_layer()
    if layer is not None:
        async_to_sync(layer.group_send)(group, message)


def status_payload(run) -> dict:
    """The payload of run.status as a dict, for a page that embeds it (runs/training_runs/pages/run_page.py)."""
    return RunState.of(run).model_dump()
