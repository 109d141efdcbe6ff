"""The user a session names, read as django.contrib.auth.get_user reads it, without writing.

Asked where Django's own pass has not run or will not run again: the request guard before a
body is read (runs/site/request_guard.py) and an open run socket before it forwards a message
(runs/live/access.py). A stale session is left for the browser's next request to clear.
"""
from importlib import import_module

from django.conf import settings
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY, get_user_model, load_backend
from django.core.exceptions import ValidationError
from django.utils.crypto import constant_time_compare


def user_of_session(session_key: str | None):
    """The active user whose session this is, or None: no such session, a backend no longer
    configured, an inactive or deleted user, or a password changed since (the session's auth hash)."""
    if not session_key:
        return None
    data = import_module(settings.SESSION_ENGINE).SessionStore(session_key=session_key).load()  # {} when gone
    backend_path = data.get(BACKEND_SESSION_KEY)
    if backend_path not in settings.AUTHENTICATION_BACKENDS:
        return None
    try:
        user_id = get_user_model()._meta.pk.to_python(data.get(SESSION_KEY))
    except ValidationError:
        return None
    user = load_backend(backend_path).get_user(user_id)  # None for an inactive user (ModelBackend)
    if user is None or not user.is_active or not _password_unchanged(user, data.get(HASH_SESSION_KEY)):
        return None
    return user


def _password_unchanged(user, session_hash: str | None) -> bool:
    """The session's hash is the user's (under SECRET_KEY or a fallback): else the password changed."""
    if not hasattr(user, "get_session_auth_hash"):
        return True
    hashes = [user.get_session_auth_hash(), *user.get_session_auth_fallback_hash()]
    if not session_hash:
        return False
    return any(constant_time_compare(session_hash, known) for known in hashes)
