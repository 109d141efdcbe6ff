"""The API keys of a run's endpoint judges, fetched from the control plane with the run's token.

The launch spec never holds a key (it is stored, and shown on the run's page): it says which
rewards have one (RewardSpec.has_api_key) and where this run's worker alone may fetch them
(LaunchSpec.secrets_url, runs/rewards/secrets.py). The control plane being away is waited on
as for any fetch (reporting/fetching.py); a refusal, or a key missing for a reward that needs one, fails
the run at start saying which reward. No key is ever written to a message or a log.
"""
from collections.abc import Callable

import httpx

from worker.trainer.reporting.fetching import PATIENCE, TIMEOUT, FetchError, NotAnswered, Patience, refuse_unless_ok, \
    with_retries
from worker.trainer.spec import RewardSpec

WHAT = "judges' API keys"


class ApiKeysError(FetchError):
    """The keys a run's judges need could not be had; the message says which and why (never a key)."""


def needs_api_keys(specs: list[RewardSpec]) -> list[str]:
    """The names of the rewards whose endpoint asks for a key, each once, in the spec's order."""
    return list(dict.fromkeys(spec.name for spec in specs if spec.has_api_key))


def fetch_api_keys(specs: list[RewardSpec], secrets_url: str | None, token: str | None,
                   patience: Patience = PATIENCE, on_wait: Callable[[str], None] | None = None,
                   transport: httpx.BaseTransport | None = None) -> dict[str, str]:
    """{reward name: key} for every reward of `specs` that has one; {} (no request) when none has."""
    names = needs_api_keys(specs)
    if not names:
        return {}
    if not secrets_url:
        raise ApiKeysError(f"reward(s) {', '.join(map(repr, names))} need an API key, and the launch spec names "
                           "no secrets_url to fetch it from")
    fetched: dict[str, str] = {}

    def fetch() -> None:
        fetched.update(_get_keys(secrets_url, token, transport))

    with_retries(fetch, secrets_url, WHAT, patience, refused=ApiKeysError, on_wait=on_wait)
    missing = [name for name in names if not isinstance(fetched.get(name), str) or not fetched[name]]
    if missing:
        raise ApiKeysError(f"the control plane gave no API key for reward(s) {', '.join(map(repr, missing))}, "
                           "whose endpoint asks for one: set the key on the reward and start the run again")
    return {name: fetched[name] for name in names}


def _get_keys(url: str, token: str | None, transport: httpx.BaseTransport | None) -> dict:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        with httpx.Client(transport=transport, timeout=TIMEOUT, follow_redirects=True) as client:
            response = client.get(url, headers=headers)
    except httpx.TransportError as exc:
        raise NotAnswered(f"the control plane did not answer: {exc or type(exc).__name__}") from exc
    refuse_unless_ok(response, url, WHAT, ApiKeysError)
    try:
        keys = response.json()["api_keys"]
    except (ValueError, KeyError, TypeError):
        raise ApiKeysError(f"the control plane's answer at {url} holds no api_keys object") from None
    if not isinstance(keys, dict):
        raise ApiKeysError(f"the control plane's answer at {url}: api_keys is {type(keys).__name__}, not an object")
    return keys
