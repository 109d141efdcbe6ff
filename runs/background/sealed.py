"""Secrets that a task's message carries through the broker, sealed with a key derived from SECRET_KEY.

A secret a user gives for one piece of background work (the Hub token of a push) must reach the
consumer, yet rest nowhere readable: not in the database, and not in clear in the broker, which
is a folder under DATA_DIR (copied with its backups) or a Redis that may persist to disk. Sealed
with Fernet (AES-CBC with an HMAC) under a key that only the control plane's own processes can
derive, the message tells whoever reads the broker nothing, and it has a shelf life: one that
waited longer than `max_age_s`, or was sealed under a SECRET_KEY since changed, does not open.
"""
import base64

from cryptography.fernet import Fernet, InvalidToken
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from django.conf import settings


class Unsealable(Exception):
    """The sealed secret is too old, or was sealed under another key; the message says which may apply."""


def fernet_for(purpose: str) -> Fernet:
    """The Fernet of one purpose under SECRET_KEY (a task's sealed message, a judge's stored key)."""
    # One key per purpose: a secret sealed for one kind of task cannot be replayed into another.
    key = HKDF(algorithm=hashes.SHA256(), length=32, salt=None,
               info=f"grpo-controlplane/sealed/{purpose}".encode()).derive(settings.SECRET_KEY.encode())
    return Fernet(base64.urlsafe_b64encode(key))


def seal(secret: str, purpose: str) -> str:
    return fernet_for(purpose).encrypt(secret.encode()).decode("ascii")


def unseal(sealed: str, purpose: str, max_age_s: int) -> str:
    try:
        return fernet_for(purpose).decrypt(sealed.encode("ascii"), ttl=max_age_s).decode()
    except (InvalidToken, UnicodeError) as exc:
        raise Unsealable(f"it waited more than {max_age_s // 3600} h in the queue, or SECRET_KEY changed since "
                         "it was sent") from exc
