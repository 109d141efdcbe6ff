"""The request guard, as an ASGI layer around a stand-in for Django: what it lets through and
what it answers itself, counted in ASGI messages (tests/security/ has the live attacks)."""
import json

import pytest

from runs.api.request_guard import RequestGuard


@pytest.fixture(autouse=True)
def limits(settings):
    settings.REQUEST_BODY_MAX_BYTES = 1_000


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


async def test_a_declared_length_over_the_limit_is_refused_before_the_body():
    app = Django()
    request = scope(headers=[("authorization", "Token t"), ("content-length", "1001")])
    status, body, taken = await call(app, request, [b"x" * 1001])
    assert (status, taken, app.called) == (413, 0, False)
    assert json.loads(body)["detail"] == ("the body is 1001 bytes; this route takes at most 1000 bytes "
                                          "(REQUEST_BODY_MAX_MB); nothing was read or stored")


async def test_a_body_without_a_length_is_cut_off_as_it_passes_the_limit():
    app = Django()
    request = scope(headers=[("cookie", "sessionid=abc")])
    status, body, taken = await call(app, request, [b"x" * 600, b"x" * 600, b"x" * 600])
    assert (status, taken) == (413, 2)  # the third piece is never asked for
    assert app.body == b"x" * 600  # the piece that passed the limit never reached Django
    assert "the body is more than 1000 bytes" in json.loads(body)["detail"]


async def test_a_body_within_the_limit_reaches_django_whole():
    app = Django()
    request = scope(headers=[("authorization", "Token t"), ("content-length", "1000")])
    status, body, _ = await call(app, request, [b"x" * 500, b"x" * 500])
    assert (status, body, app.body) == (200, b"ok", b"x" * 1000)


async def test_a_page_write_without_a_session_goes_to_the_login_page():
    status, _, taken = await call(Django(), scope(path="/runs/7/cancel/"), [b""])
    assert (status, taken) == (302, 0)


async def test_a_websocket_passes_untouched():
    seen = []

    async def consumers(request_scope, receive, send):
        seen.append(request_scope["type"])

    await RequestGuard(consumers)({"type": "websocket", "path": "/ws/runs/1/"}, None, None)
    assert seen == ["websocket"]
