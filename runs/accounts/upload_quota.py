"""The storage one account's uploaded datasets may take together (UPLOAD_QUOTA_PER_ACCOUNT_MB; 0: none).

DATASET_UPLOAD_MAX_MB bounds one upload; without this, one account could fill the disk with many.
An upload that would take its account past the quota is refused with 507 before it is stored:
checked as the request is validated, and again under the account's lock as the dataset is saved
(runs/background/limits.py: lock_account), so two uploads at once cannot both pass the last room.
`declared_upload_refusal` is the same check from a Content-Length, for the request guard, which can
refuse before a byte of the body is read.
"""
from channels.db import database_sync_to_async
from django.conf import settings
from django.http.cookie import parse_cookie
from rest_framework.authtoken.models import Token

from runs.accounts.session_users import user_of_session
from runs.datasets.models import Dataset

SETTING = "UPLOAD_QUOTA_PER_ACCOUNT_MB"


class UploadQuotaExceeded(Exception):
    """A 507 in the API (runs/web/errors.py), a message beside the file on a page."""


def _mib(n: int) -> str:
    return f"{n / (1024 * 1024):.1f} MiB"


def quota_problem(user, incoming_bytes: int) -> str | None:
    """Why `incoming_bytes` more would take the user past the quota, or None (also when there is none)."""
    quota = settings.UPLOAD_QUOTA_PER_ACCOUNT_BYTES
    if not quota:
        return None
    used = Dataset.uploaded_bytes_of(user)
    if used + incoming_bytes <= quota:
        return None
    return (f"this upload ({_mib(incoming_bytes)}) would take your uploads past your account's quota: "
            f"{_mib(used)} used of {_mib(quota)} ({SETTING}); delete datasets you no longer need. "
            "Nothing was stored")


def refuse_past_quota(user, incoming_bytes: int) -> None:
    if problem := quota_problem(user, incoming_bytes):
        raise UploadQuotaExceeded(problem)


async def declared_upload_refusal(headers: dict[str, str], declared_bytes: int) -> str | None:
    """For the request guard: the refusal of an upload of `declared_bytes` (its Content-Length, less
    the form's margin) by the account its session cookie or API token names, or None. Credentials
    that name no account are left to DRF and the pages, which refuse them after."""
    if not settings.UPLOAD_QUOTA_PER_ACCOUNT_BYTES:
        return None
    return await database_sync_to_async(_refusal_for_credentials)(headers, declared_bytes)


def _refusal_for_credentials(headers: dict[str, str], declared_bytes: int) -> str | None:
    user = _account_of(headers)
    return quota_problem(user, declared_bytes) if user is not None else None


def _account_of(headers: dict[str, str]):
    """The active account an API token or a session cookie names (the guard has checked them already)."""
    scheme, _, key = headers.get("authorization", "").partition(" ")
    if scheme.lower() == "token" and key.strip():
        token = Token.objects.select_related("user").filter(key=key.strip()).first()
        return token.user if token is not None and token.user.is_active else None
    return user_of_session(parse_cookie(headers.get("cookie", "")).get(settings.SESSION_COOKIE_NAME))
