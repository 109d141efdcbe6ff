"""Whether a request's credentials name an active user: asked by the request guard before a body.

The guard used to let in any write that brought a session cookie or an Authorization header,
and a made-up one got its 401 only after Django had read (and spooled) the whole body. These
checks are the ones DRF and Django make after, made first (synchronous: the guard runs them off
the event loop):
- header credentials through the API's own authentication classes (Token, and any other that
  reads only the headers), so that both refuse the same headers in the same words;
- a session through the configured SESSION_ENGINE, read as django.contrib.auth.get_user reads
  it (the user's backend, an active user, the password hash, SECRET_KEY_FALLBACKS too), but
  without writing: a session to flush or re-key is left to Django's own pass.
CSRF and permissions stay Django's and DRF's.
"""
from collections.abc import Sequence
from typing import cast

from django.http import HttpRequest
from rest_framework.authentication import BaseAuthentication, SessionAuthentication
from rest_framework.exceptions import AuthenticationFailed
from rest_framework.settings import api_settings

from runs.accounts.session_users import user_of_session

NO_CREDENTIALS = "Authentication credentials were not provided."  # DRF's words for the same refusal


def session_user_is_active(session_key: str | None) -> bool:
    """Whether `session_key` names a live session of an active user."""
    return user_of_session(session_key) is not None


def api_user_refusal(authorization: str, session_key: str | None) -> str | None:
    """Why an API write with these credentials would get a 401 from DRF; None when it would not.
    Header classes come first, as DRF asks them in order and a wrong header is refused even
    beside a good session."""
    headers_only = HttpRequest()  # no body, no session: what a header class may read
    if authorization:
        headers_only.META["HTTP_AUTHORIZATION"] = authorization
    for authentication in _authentication_classes():
        if issubclass(authentication, SessionAuthentication):
            continue
        try:
            # A header class reads the request's META alone, which a bare HttpRequest has.
            if authentication().authenticate(headers_only) is not None:  # type: ignore[arg-type]
                return None
        except AuthenticationFailed as exc:
            return str(exc.detail)
    if any(issubclass(a, SessionAuthentication) for a in _authentication_classes()) \
            and session_user_is_active(session_key):
        return None
    return NO_CREDENTIALS


def _authentication_classes() -> Sequence[type[BaseAuthentication]]:
    # DRF's stubs type the setting as its import strings; api_settings gives the classes imported.
    return cast(Sequence[type[BaseAuthentication]], api_settings.DEFAULT_AUTHENTICATION_CLASSES)
