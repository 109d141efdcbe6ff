"""Bytes only after identity: an ASGI layer in front of Django that refuses before the body.

Django reads a whole request body before any view runs, so a view's 401 or 413 comes after the
bytes were spooled to disk. Here, before Django is handed the request (runs/site/body_limits.py
says what each route needs):
- a run-token route (ingest, checkpoint uploads, a run's dataset) needs the run's valid token,
  checked in the database (off the event loop) with the views' own check and words;
- a write anywhere else needs credentials that name an active user, checked in the database
  (off the event loop) as DRF and Django check them after (runs/accounts/user_credentials.py): an API
  write a valid token or session, a page write a valid session; a made-up one reads no byte;
- a Content-Length over the route's limit is a 413 naming the limit, and a body without one is
  counted as it arrives and cut off with a 413 the moment it passes the limit.
"""
import json
from urllib.parse import quote

from channels.db import database_sync_to_async
from django.conf import settings
from django.http.cookie import parse_cookie
from django.shortcuts import resolve_url
from rest_framework.exceptions import AuthenticationFailed

from runs.accounts.run_tokens import BEARER_REALM, WRONG_TOKEN_FOR_EVENTS, WRONG_TOKEN_FOR_FILES, run_of_bearer
from runs.accounts.upload_quota import declared_upload_refusal
from runs.accounts.user_credentials import NO_CREDENTIALS, api_user_refusal, session_user_is_active
from runs.site.body_limits import DATASET_UPLOAD_SETTING, MULTIPART_MARGIN, Gate, Identity, gate_for
from runs.web.record_ids import whole_number


class RequestGuard:
    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        gate = gate_for(scope["method"], scope["path"])
        headers = _headers(scope)
        refusal = (await _identity_refusal(gate, headers, scope) or _declared_size_refusal(gate, headers)
                   or await _upload_quota_refusal(gate, headers))
        if refusal is not None:
            return await refusal.send_to(send)
        await BodyCounter(self.app, gate).serve(scope, receive, send)


class Refusal:
    """A whole answer sent before the body is read; the connection is closed after it."""

    def __init__(self, status: int, body: bytes, content_type: bytes = b"application/json", extra=()):
        self.status, self.body = status, body
        self.headers = [(b"content-type", content_type), (b"content-length", str(len(body)).encode()),
                        (b"connection", b"close"), *extra]

    @classmethod
    def json(cls, status: int, detail: str, extra=()) -> "Refusal":
        return cls(status, json.dumps({"detail": detail}).encode(), extra=extra)

    async def send_to(self, send) -> None:
        await send({"type": "http.response.start", "status": self.status, "headers": self.headers})
        await send({"type": "http.response.body", "body": self.body})


class BodyCounter:
    """Hands the app the body as it arrives, counting it; past the limit the app is told the
    client went away (Django then answers nothing) and the client gets the 413."""

    def __init__(self, app, gate: Gate):
        self.app, self.gate = app, gate
        self.received, self.refused = 0, False

    async def serve(self, scope, receive, send):
        async def counted_receive():
            message = await receive()
            if message["type"] == "http.request" and not self.refused:
                self.received += len(message.get("body", b""))
                if self.received > self.gate.limit:
                    self.refused = True
                    await too_large(self.gate, f"more than {_size(self.gate.limit)}").send_to(send)
                    return {"type": "http.disconnect"}
            return message

        async def guarded_send(message):
            if not self.refused:
                await send(message)

        await self.app(scope, counted_receive, guarded_send)


async def _identity_refusal(gate: Gate, headers: dict, scope) -> Refusal | None:
    authorization = headers.get("authorization", "")
    if gate.identity is Identity.RUN_TOKEN:
        return await database_sync_to_async(_run_token_refusal)(gate, authorization)
    session_key = parse_cookie(headers.get("cookie", "")).get(settings.SESSION_COOKIE_NAME)
    if gate.identity is Identity.API_USER:
        # Nothing to look up without credentials (DRF's words, no trip to the database).
        refused = await database_sync_to_async(api_user_refusal)(authorization, session_key) \
            if authorization or session_key else NO_CREDENTIALS
        return Refusal.json(401, refused, extra=[(b"www-authenticate", b"Token")]) if refused else None
    if gate.identity is Identity.PAGE_USER and not (
            session_key and await database_sync_to_async(session_user_is_active)(session_key)):
        return _to_login_page(scope)
    return None


def _run_token_refusal(gate: Gate, authorization: str) -> Refusal | None:
    challenge = [(b"www-authenticate", BEARER_REALM.encode())]
    assert gate.run_id is not None, "a run-token gate names its run (body_limits._run_token_gate)"
    try:
        run = run_of_bearer(gate.run_id, authorization)
    except AuthenticationFailed as exc:
        return Refusal.json(401, str(exc.detail), extra=challenge)
    if run is not None:
        return None
    if gate.wrong_token_is_404:
        return Refusal.json(404, WRONG_TOKEN_FOR_FILES)
    return Refusal.json(401, WRONG_TOKEN_FOR_EVENTS, extra=challenge)


def _declared_size_refusal(gate: Gate, headers: dict) -> Refusal | None:
    declared = whole_number(headers.get("content-length", ""))
    if declared is not None and declared > gate.limit:
        return too_large(gate, _size(declared))
    return None


async def _upload_quota_refusal(gate: Gate, headers: dict) -> Refusal | None:
    """A dataset upload whose declared size (less the form's own margin) would take its account
    past UPLOAD_QUOTA_PER_ACCOUNT_MB: a 507 before the body; checked again as it is stored."""
    declared = whole_number(headers.get("content-length", ""))
    if gate.limit_setting != DATASET_UPLOAD_SETTING or declared is None:
        return None
    detail = await declared_upload_refusal(headers, max(declared - MULTIPART_MARGIN, 0))
    return Refusal.json(507, detail) if detail else None


def too_large(gate: Gate, size: str) -> Refusal:
    return Refusal.json(413, f"the body is {size}; this route takes at most {_size(gate.limit)} "
                             f"({gate.limit_setting}); nothing was read or stored")


def _to_login_page(scope) -> Refusal:
    """Where login_required would send a signed-out browser (the admin has its own login page)."""
    login = "/admin/login/" if scope["path"].startswith("/admin/") else resolve_url(settings.LOGIN_URL)
    location = f"{login}?next={quote(scope['path'])}".encode()
    return Refusal(302, b"", content_type=b"text/plain", extra=[(b"location", location)])


def _headers(scope) -> dict[str, str]:
    return {name.decode("latin-1").lower(): value.decode("latin-1") for name, value in scope["headers"]}


def _size(n: int) -> str:
    if n < 1024 * 1024:
        return f"{n} bytes"
    if n < 1024 ** 3:
        return f"{n / 1024 ** 2:.1f} MiB"
    return f"{n / 1024 ** 3:.1f} GiB"
