"""The one door to the live channel.

Everything a browser hears about a run passes through `publish`, and only
after the database transaction that stored it commits: a client that reacts
to a message by fetching over REST always finds the data there.
"""
import json

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.core.serializers.json import DjangoJSONEncoder
from django.db import transaction

LIVE_TYPES = ("run.status", "run.metrics", "run.samples", "run.log", "run.checkpoint")


def run_group(run_id: int) -> str:
    return f"run-{run_id}"


def publish(run_id: int, event_type: str, payload: dict) -> None:
    if event_type not in LIVE_TYPES:
        raise ValueError(f"{event_type!r} is not a live event type ({', '.join(LIVE_TYPES)})")
    # Encoded once here, not once per connected browser; consumers forward the text as is.
    text = json.dumps({"type": event_type, "run": run_id, "payload": payload}, cls=DjangoJSONEncoder)
    message = {"type": event_type, "text": text}
    transaction.on_commit(lambda: _send(run_group(run_id), message))


def _send(group: str, message: dict) -> None:
    layer = get_channel_layer()
    if layer is not None:
        async_to_sync(layer.group_send)(group, message)


def status_payload(run) -> dict:
    return {
        "status": run.status, "cancel_requested": run.cancel_requested, "step": run.current_step,
        "error": run.error_message, "attempt": run.attempt,
    }
