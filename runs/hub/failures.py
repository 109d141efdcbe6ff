"""Why a Hub push failed, in words a person can act on.

huggingface_hub raises HTTP errors from the Hub, transport errors from httpx2 and a few of its
own; a push's `detail` should say which of "your token", "that repository", "the Hub cannot be
reached" or "this control plane" went wrong, not print a traceback.
"""
import httpx2
from huggingface_hub.errors import HfHubHTTPError, OfflineModeIsEnabled

from runs.artifacts.stores import StoreUnavailable

# What failure_reason explains fully; anything else is also logged with its traceback.
EXPLAINED = (HfHubHTTPError, httpx2.TransportError, OfflineModeIsEnabled, StoreUnavailable, OSError)


def failure_reason(exc: BaseException, repo_id: str, endpoint: str) -> str:
    if isinstance(exc, HfHubHTTPError):
        return hub_refusal(exc, repo_id, endpoint)
    if isinstance(exc, httpx2.TransportError):
        return f"could not reach the Hub at {endpoint} ({type(exc).__name__}: {str(exc) or 'no answer'})"
    if isinstance(exc, OfflineModeIsEnabled):
        return "the control plane runs with HF_HUB_OFFLINE set, so it may not talk to the Hub"
    if isinstance(exc, StoreUnavailable):
        return f"the artifact store became unavailable during the push; try again later ({exc})"
    if isinstance(exc, OSError):
        return f"could not copy the checkpoint's files to a folder for the push ({exc})"
    return f"the push failed unexpectedly ({type(exc).__name__}: {exc})"


def hub_refusal(exc: HfHubHTTPError, repo_id: str, endpoint: str) -> str:
    code = exc.response.status_code
    said = f": {exc.server_message.strip()}" if exc.server_message else ""
    if code == 401:
        return (f"the Hub at {endpoint} refused the token (401 Unauthorized){said}; "
                "check that it is a valid access token")
    if code == 403:
        return (f"the token may not write to {repo_id} (403 Forbidden){said}; "
                "it needs write access to that user's or organization's repositories")
    return f"the Hub at {endpoint} answered {code} for {repo_id}{said}"


def without_secret(text: str, secret: str) -> str:
    """`text` with any copy of the secret masked: messages are stored and shown, the token never is."""
    return text.replace(secret, "[token]") if secret else text
