"""The one door to the live channel.

Everything a browser hears about a run passes through `publish`, and only
after the database transaction that stored it commits: a client that reacts
to a message by fetching over REST always finds the data there. What may be
published is a closed set of typed messages (runs.live_messages).
"""
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import transaction

from runs.live_messages import PUBLISHED, PublishedMessage, RunState, message_type

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


def _send(group: str, message: dict) -> None:
    layer = get_channel_layer()
    if layer is not None:
        async_to_sync(layer.group_send)(group, message)


def status_payload(run) -> dict:
    """The payload of run.status as a dict, for a page that embeds it (runs/pages/watch/run_page.py)."""
    return RunState.of(run).model_dump()
