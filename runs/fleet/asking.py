"""Asking the live workers what they are, through the broker, briefly and not too often.

One Celery broadcast of the workers' announce command (worker/inspection.py) collects every
live worker's answer within INSPECT_TIMEOUT_S: a broadcast cannot know how many workers will
answer, so it always waits that long. The answer is kept for CACHE_S, so that pages and run
creations in quick succession wait once. "Last heard" is when a worker's answer arrived here:
Celery's event heartbeats would need a process listening to the event stream all the time.
"""
import threading
import time

from django.utils import timezone
from kombu.exceptions import OperationalError

from runs.fleet.records import Fleet, LiveWorker
from worker.broker import ANNOUNCE_COMMAND

INSPECT_TIMEOUT_S = 1.0
CACHE_S = 5.0


def ask_fleet(timeout_s: float = INSPECT_TIMEOUT_S) -> Fleet:
    """Every live worker's announcement, or a Fleet saying why the broker could not be asked.
    The connection is tried once, not retried: a page must not hang on a broker that is down."""
    from controlplane.celery import app  # here, so that importing runs never configures Celery

    asked_at, heard = timezone.now(), []
    connection = app.connection_for_write(connect_timeout=timeout_s)
    broker_errors = (OperationalError, OSError, *connection.connection_errors, *connection.channel_errors)
    try:
        with connection:
            connection.ensure_connection(max_retries=0, timeout=timeout_s)
            app.control.broadcast(ANNOUNCE_COMMAND, reply=True, timeout=timeout_s, connection=connection,
                                  callback=lambda reply: heard.append((timezone.now(), reply)))
    except broker_errors as exc:
        return Fleet(asked_at, broker_problem=f"the broker ({connection.as_uri()}) cannot be reached: {exc}")
    workers = (LiveWorker.from_reply(name, body, at) for at, reply in heard for name, body in reply.items())
    return Fleet(asked_at, tuple(sorted(workers, key=lambda worker: worker.name)))


class _Remembered:
    """The last answer and when it came (monotonic). The lock makes requests that arrive while the
    broker is being asked wait for that answer instead of asking again."""

    def __init__(self):
        self.lock = threading.Lock()
        self.fleet: Fleet | None = None
        self.at = 0.0


_REMEMBERED = _Remembered()


def current_fleet() -> Fleet:
    """The fleet as last asked, if that was under CACHE_S ago; else asked now."""
    memory = _REMEMBERED
    with memory.lock:
        if memory.fleet is None or time.monotonic() - memory.at >= CACHE_S:
            memory.fleet, memory.at = ask_fleet(), time.monotonic()
        return memory.fleet


def forget() -> None:
    """Drops the remembered answer, so that the next call asks the broker (tests)."""
    with _REMEMBERED.lock:
        _REMEMBERED.fleet = None
