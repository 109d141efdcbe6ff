"""Whether a run's open socket may still speak to its user.

A socket is authorised once, when it connects; what it hears afterwards must stop when the user
loses the run: the run given away or deleted, the user deactivated, deleted or no longer staff,
the session logged out, flushed or expired, the password changed (the session's auth hash).
The consumer (runs/live/consumers.py) asks `may_still_listen` before it forwards a message, at most
every LIVE_ACCESS_RECHECK_S, and at once when runs/live/access_watch.py says something changed.
"""
import hashlib
from dataclasses import dataclass

from django.contrib.auth import get_user_model

from runs.accounts.session_users import user_of_session
from runs.training_runs.models import Run


@dataclass(frozen=True)
class Listener:
    """Who a socket was opened for: the user, the session they proved it with, the run."""
    user_id: int
    session_key: str | None  # None only where a scope is given its user directly (tests)
    run_id: int


def session_digest(session_key: str | None) -> str:
    """A session's name that is no credential, for messages about it through the channel layer."""
    return hashlib.sha256((session_key or "").encode()).hexdigest() if session_key else ""


def may_still_listen(listener: Listener) -> bool:
    user = _current_user(listener)
    return user is not None and Run.objects.visible_to(user).filter(pk=listener.run_id).exists()


def _current_user(listener: Listener):
    if listener.session_key is None:
        return get_user_model().objects.filter(pk=listener.user_id, is_active=True).first()
    return _user_of_session(listener.session_key, listener.user_id)


def _user_of_session(session_key: str, user_id: int):
    user = user_of_session(session_key)
    return user if user is not None and user.pk == user_id else None
