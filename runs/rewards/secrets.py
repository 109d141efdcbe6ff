"""A judge endpoint's API key, kept encrypted in the database and shown to no one.

The key is written once (API, CLI, admin) and read back only by the worker that runs a run
naming the judge, with that run's token (runs/training_runs/views/run_secrets.py). At rest it is sealed
with Fernet (AES-CBC with an HMAC) under a key derived from SECRET_KEY for this purpose alone
(runs/background/sealed.py): a database dump or backup holds no usable key. Unlike a task's
sealed message it has no shelf life: it lives as long as the reward function. Changing
SECRET_KEY makes stored keys unreadable (the run then fails at start saying to set the key
again), unless SECRETS_ENCRYPTION_KEY, a Fernet key of its own, is set: it seals them instead.
A key belongs to the endpoint it was given for: a change to the judge's base_url forgets it,
whoever makes the change (staff too), unless the same change gives a new key (endpoint_moved).
"""
from cryptography.fernet import Fernet, InvalidToken
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from runs.background.sealed import fernet_for  # one key per purpose, derived from SECRET_KEY

PURPOSE = "judge-api-key"
KEY_SETTING = "SECRETS_ENCRYPTION_KEY"
# The params that say where a judge's key is sent. Any change counts, not only the host's: a path
# on a shared gateway or a scheme without TLS sends the key somewhere else just as well.
KEY_BOUND_PARAMS = ("base_url",)


class KeyUnreadable(Exception):
    """The stored key does not open: SECRET_KEY changed since it was written (or the column was edited)."""


def endpoint_moved(stored: object, changed: object) -> bool:
    """Whether a saved change sends the judge's key somewhere else than the one it was given for,
    so the stored key has to be forgotten (a new reward, with nothing stored, moves nothing)."""
    if stored is None or changed is None:
        return False
    return any(_param(stored, name) != _param(changed, name) for name in KEY_BOUND_PARAMS)


def _param(params, name: str) -> str:
    # An admin form's params may still be the text typed (not an object) when its JSON is refused.
    return str(params.get(name, "")) if isinstance(params, dict) else ""



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

