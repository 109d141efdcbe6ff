"""The request guard, as an ASGI layer around a stand-in for Django: what it lets through and
what it answers itself, counted in ASGI messages (tests/security/ has the live attacks)."""
import json

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from rest_framework.authtoken.models import Token

from runs.site.request_guard import RequestGuard


@pytest.fixture(autouse=True)
def limits(settings):
    settings.REQUEST_BODY_MAX_BYTES = 1_000


@pytest.fixture
def user(transactional_db):  # committed: the guard reads it from another thread
    return get_user_model().objects.create_user("someone", password="someone-pass-123")


@pytest.fixture
def token(user) -> str:
    return Token.objects.create(user=user).key


@pytest.fixture
def session(user) -> str:
    client = Client()
    client.force_login(user)
    return client.cookies["sessionid"].value


class Django:
    """Reads the whole body, as Django's handler does, then answers 200 (or nothing when the
    client went away)."""

    def __init__(self):
        self.body, self.called = b"", False

    async def __call__(self, scope, receive, send):
        self.called = True
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            self.body += message.get("body", b"")
            if not message.get("more_body"):
                break
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})


def scope(method="POST", path="/api/runs/", headers=()):
    return {"type": "http", "method": method, "path": path,
            "headers": [(k.encode(), v.encode()) for k, v in headers]}


async def call(app, request_scope, pieces):
    """Runs the guard; returns what the client got and how many pieces of the body were taken."""
    queue, sent = list(pieces), []

    async def receive():
        body = queue.pop(0)
        return {"type": "http.request", "body": body, "more_body": bool(queue)}

    async def send(message):
        sent.append(message)

    await RequestGuard(app)(request_scope, receive, send)
    status = sent[0]["status"] if sent else None
    body = b"".join(m.get("body", b"") for m in sent[1:])
    return status, body, len(pieces) - len(queue)


async def test_a_write_with_no_credentials_is_refused_and_no_body_is_taken():
    app = Django()
    status, body, taken = await call(app, scope(headers=[("content-type", "application/json")]), [b"{}"])
    assert (status, taken, app.called) == (401, 0, False)
    assert json.loads(body) == {"detail": "Authentication credentials were not provided."}


async def test_a_declared_length_over_the_limit_is_refused_before_the_body(token):
    app = Django()
    request = scope(headers=[("authorization", f"Token {token}"), ("content-length", "1001")])
    status, body, taken = await call(app, request, [b"x" * 1001])
    assert (status, taken, app.called) == (413, 0, False)
    assert json.loads(body)["detail"] == ("the body is 1001 bytes; this route takes at most 1000 bytes "
                                          "(REQUEST_BODY_MAX_MB); nothing was read or stored")


async def test_a_body_without_a_length_is_cut_off_as_it_passes_the_limit(session):
    app = Django()
    request = scope(headers=[("cookie", f"sessionid={session}")])
    status, body, taken = await call(app, request, [b"x" * 600, b"x" * 600, b"x" * 600])
    assert (status, taken) == (413, 2)  # the third piece is never asked for
    assert app.body == b"x" * 600  # the piece that passed the limit never reached Django
    assert "the body is more than 1000 bytes" in json.loads(body)["detail"]


async def test_a_body_within_the_limit_reaches_django_whole(token):
    app = Django()
    request = scope(headers=[("authorization", f"Token {token}"), ("content-length", "1000")])
    status, body, _ = await call(app, request, [b"x" * 500, b"x" * 500])
    assert (status, body, app.body) == (200, b"ok", b"x" * 1000)


async def test_a_page_write_without_a_session_goes_to_the_login_page():
    status, _, taken = await call(Django(), scope(path="/runs/7/cancel/"), [b""])
    assert (status, taken) == (302, 0)


@pytest.mark.parametrize("credentials, detail", [
    ([("authorization", "Token made-up")], "Invalid token."),
    ([("authorization", "Token")], "Invalid token header. No credentials provided."),
    ([("cookie", "sessionid=made-up-session-key")], "Authentication credentials were not provided."),
    ([("authorization", "Basic c29tZW9uZTpwdw==")], "Authentication credentials were not provided."),
])
async def test_made_up_api_credentials_are_refused_and_no_body_is_taken(transactional_db, credentials, detail):
    app = Django()
    status, body, taken = await call(app, scope(headers=credentials), [b"{}"])
    assert (status, taken, app.called) == (401, 0, False)
    assert json.loads(body) == {"detail": detail}


async def test_a_made_up_token_is_refused_beside_a_valid_session(session):
    """DRF asks the token first and refuses a wrong one whatever the session says."""
    request = scope(headers=[("authorization", "Token made-up"), ("cookie", f"sessionid={session}")])
    status, _, taken = await call(Django(), request, [b"{}"])
    assert (status, taken) == (401, 0)


async def test_an_inactive_users_token_and_session_are_refused(user, token, session):
    user.is_active = False
    await user.asave()
    for credentials in [("authorization", f"Token {token}"), ("cookie", f"sessionid={session}")]:
        status, _, taken = await call(Django(), scope(headers=[credentials]), [b"{}"])
        assert (status, taken) == (401, 0), credentials


async def test_a_session_from_before_a_password_change_is_refused(user, session):
    user.set_password("a-new-password-456")
    await user.asave()
    status, _, taken = await call(Django(), scope(headers=[("cookie", f"sessionid={session}")]), [b"{}"])
    assert (status, taken) == (401, 0)


async def test_a_valid_session_or_token_reaches_django(token, session):
    for credentials in [("authorization", f"Token {token}"), ("cookie", f"sessionid={session}")]:
        app = Django()
        status, _, _ = await call(app, scope(headers=[credentials]), [b"{}"])
        assert (status, app.body) == (200, b"{}"), credentials


async def test_a_page_write_with_a_made_up_session_goes_to_the_login_page_unread(transactional_db):
    request = scope(path="/runs/7/cancel/", headers=[("cookie", "sessionid=made-up-session-key")])
    status, _, taken = await call(Django(), request, [b"x"])
    assert (status, taken) == (302, 0)


async def test_a_page_write_with_a_valid_session_reaches_django(session):
    app = Django()
    status, _, _ = await call(app, scope(path="/runs/7/cancel/", headers=[("cookie", f"sessionid={session}")]), [b"x"])
    assert (status, app.called) == (200, True)


async def test_the_login_page_takes_a_post_without_a_session():
    app = Django()
    status, _, _ = await call(app, scope(path="/login/"), [b"username=a&password=b"])
    assert (status, app.called) == (200, True)


async def test_a_websocket_passes_untouched():
    seen = []

    async def consumers(request_scope, receive, send):
        seen.append(request_scope["type"])

    await RequestGuard(consumers)({"type": "websocket", "path": "/ws/runs/1/"}, None, None)
    assert seen == ["websocket"]
