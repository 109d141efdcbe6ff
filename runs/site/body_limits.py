"""What a request must show before its body is read: who may send it, and how many bytes.

Django's ASGI handler reads a whole body (to a temporary file past a few MiB) before any view
runs, so a view's own 401 or 413 comes after the bytes. The request guard
(runs/site/request_guard.py) asks `gate_for` first and refuses before the body. Every route has
a limit: the default, or the larger one of a route that takes uploads.
"""
import re
from dataclasses import dataclass
from enum import Enum

from django.conf import settings

WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})
MULTIPART_MARGIN = 64 * 1024  # the form fields and part headers around an uploaded dataset


class Identity(Enum):
    NONE = "none"            # nothing to show before the body (the view decides)
    RUN_TOKEN = "run_token"  # the run's bearer token, checked against the run
    API_USER = "api_user"    # a valid API token (or other header DRF takes) or session of an active user
    PAGE_USER = "page_user"  # a valid session of an active user, else the login page (as login_required)


@dataclass(frozen=True)
class Gate:
    limit: int
    limit_setting: str
    identity: Identity = Identity.NONE
    run_id: int | None = None
    wrong_token_is_404: bool = False  # files answer a wrong token as not found, events with a 401


RUN_TOKEN_ROUTE = re.compile(r"^/api/runs/(?P<run_id>\d+)/(?P<what>events/$|dataset/$|uploads/)")
CHECKPOINT_CHUNK = re.compile(r"^/api/runs/\d+/uploads/\d+/files/.")
# The methods each run-token route takes; another one is the view's to refuse (405), token or not.
TOKEN_METHODS = [(re.compile(r"/events/$"), {"POST"}), (re.compile(r"/dataset/$"), {"GET", "HEAD"}),
                 (re.compile(r"/uploads/\d+/files/."), {"GET", "HEAD", "PUT"}),
                 (re.compile(r"/uploads/\d+/$"), {"GET", "HEAD"}), (re.compile(r"/uploads/\d+/begin$"), {"POST"}),
                 (re.compile(r"/uploads/\d+/complete$"), {"POST"}),
                 (re.compile(r"/uploads/\d+/archive$"), {"GET", "HEAD"})]
DATASET_UPLOADS = re.compile(r"^(/api/datasets/|/datasets/new/|/admin/runs/dataset/(add|\d+/change)/)$")
DATASET_UPLOAD_SETTING = "DATASET_UPLOAD_MAX_MB"
PUBLIC_PAGES = re.compile(r"^(/login/|/logout/|/admin/login/|/admin/logout/)$")


def gate_for(method: str, path: str) -> Gate:
    """The limit and the identity a request to `path` needs before its body is read."""
    if token_route := RUN_TOKEN_ROUTE.match(path):
        return _run_token_gate(method, path, int(token_route["run_id"]), token_route["what"])
    if method == "POST" and DATASET_UPLOADS.match(path):
        limit = settings.DATASET_UPLOAD_MAX_BYTES + MULTIPART_MARGIN
        return Gate(limit, DATASET_UPLOAD_SETTING, _user_identity(method, path))
    return Gate(settings.REQUEST_BODY_MAX_BYTES, "REQUEST_BODY_MAX_MB", _user_identity(method, path))


def _run_token_gate(method: str, path: str, run_id: int, what: str) -> Gate:
    if not any(route.search(path) and method in methods for route, methods in TOKEN_METHODS):
        return Gate(settings.REQUEST_BODY_MAX_BYTES, "REQUEST_BODY_MAX_MB")
    if what == "events/":
        limit, setting = settings.INGEST_BATCH_MAX_BYTES, "INGEST_BATCH_MAX_MB"
    elif method == "PUT" and CHECKPOINT_CHUNK.match(path):
        limit, setting = settings.CHECKPOINT_CHUNK_MAX_BYTES, "CHECKPOINT_CHUNK_MAX_MB"
    else:
        limit, setting = settings.REQUEST_BODY_MAX_BYTES, "REQUEST_BODY_MAX_MB"
    return Gate(limit, setting, Identity.RUN_TOKEN, run_id, wrong_token_is_404=what != "events/")


def _user_identity(method: str, path: str) -> Identity:
    """Writes need a signed-in user everywhere but the login pages; reads are the views' to answer."""
    if method not in WRITES or PUBLIC_PAGES.match(path):
        return Identity.NONE
    return Identity.API_USER if path.startswith("/api/") else Identity.PAGE_USER
