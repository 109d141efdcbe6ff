"""A judge endpoint's API key, kept encrypted in the database and shown to no one.

The key is written once (API, CLI, admin) and read back only by the worker that runs a run
naming the judge, with that run's token (runs/api/views/run_secrets.py). At rest it is sealed
with Fernet (AES-CBC with an HMAC) under a key derived from SECRET_KEY for this purpose alone
(runs/background/sealed.py): a database dump or backup holds no usable key. Unlike a task's
sealed message it has no shelf life: it lives as long as the reward function. Changing
SECRET_KEY makes stored keys unreadable (the run then fails at start saying to set the key
again), unless SECRETS_ENCRYPTION_KEY, a Fernet key of its own, is set: it seals them instead.
"""
from cryptography.fernet import Fernet, InvalidToken
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from runs.background.sealed import fernet_for  # one key per purpose, derived from SECRET_KEY

PURPOSE = "judge-api-key"
KEY_SETTING = "SECRETS_ENCRYPTION_KEY"


class KeyUnreadable(Exception):
    """The stored key does not open: SECRET_KEY changed since it was written (or the column was edited)."""


def seal_api_key(key: str) -> str:
    if not key:
        raise ValueError("an empty API key is no key: clear the stored one instead of sealing ''")
    return _sealer().encrypt(key.encode()).decode("ascii")


def unseal_api_key(sealed: str) -> str:
    try:
        return _sealer().decrypt(sealed.encode("ascii")).decode()
    except (InvalidToken, UnicodeError) as exc:
        raise KeyUnreadable(f"the stored API key does not open: SECRET_KEY (or {KEY_SETTING}) changed since it "
                            "was written; set the reward's API key again") from exc


def _sealer() -> Fernet:
    """The operator's own key when set (it survives a new SECRET_KEY), else one derived for this purpose."""
    own = getattr(settings, KEY_SETTING, "")
    if not own:
        return fernet_for(PURPOSE)
    try:
        return Fernet(own)
    except ValueError:
        raise ImproperlyConfigured(
            f"{KEY_SETTING} must be a Fernet key (32 url-safe base64-encoded bytes), made with: python -c "
            "'from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())'") from None

