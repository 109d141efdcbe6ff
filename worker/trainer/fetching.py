"""Files a worker fetches from the control plane with the run's token: an uploaded dataset
(data/fetch.py), a checkpoint to resume from (checkpoint_fetch.py).

What is tried again, and for how long:
- the control plane away (no connection, a stream broken off) or answering 5xx or 429 (busy):
  tried again with a pause that doubles from 1 s up to 30 s, for up to FETCH_PATIENCE_S in all.
  Each pause is said, in the run's log: through the caller's `on_wait`, else as a warning of
  this module's logger, which the worker forwards to the run's log with the trainer's output;
- bytes that arrived wrong (a checksum that differs, a broken archive): fetched once more only,
  as bytes wrong twice are wrong where they are kept;
- a refusal (401, 403, 404 and any other 4xx: no token, not this run's, gone): final at once,
  with the control plane's reason.
"""
import hashlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import httpx

log = logging.getLogger(__name__)
CHUNK = 1024 * 1024

# A control plane restarted (a deploy, a migration, a reboot) is away for seconds to a couple of
# minutes: five minutes waits that out. A run that waits longer at start holds its GPUs for
# nothing; it had better fail with the reason, to be resumed once the control plane is back.
FETCH_PATIENCE_S = 300.0
FIRST_WAIT_S, MAX_WAIT_S = 1.0, 30.0
WRONG_BYTES_TRIES = 2
# Connecting takes milliseconds when the control plane is up; a silent network should cost a
# try 10 s, not the 120 s a slow answer may take.
TIMEOUT = httpx.Timeout(120.0, connect=10.0)


class FetchError(ValueError):
    """What the worker needed could not be had; the message says why."""


class NotAnswered(Exception):
    """The control plane is away or busy: it may answer later (after `retry_after_s`, when it said)."""

    def __init__(self, message: str, retry_after_s: float | None = None):
        super().__init__(message)
        self.retry_after_s = retry_after_s


class WrongBytes(Exception):
    """The bytes arrived, but not as they should be (checksum, archive): worth one more fetch."""


@dataclass(frozen=True)
class Patience:
    """How long a fetch keeps trying while the control plane is away, and how it waits."""
    window_s: float = FETCH_PATIENCE_S
    first_wait_s: float = FIRST_WAIT_S
    max_wait_s: float = MAX_WAIT_S
    wrong_bytes_tries: int = WRONG_BYTES_TRIES
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.monotonic


PATIENCE = Patience()


def sha256_of(path: Path) -> str:
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def stream_to_file(url: str, token: str | None, target: Path, what: str, on_chunk: Callable[[bytes], None] = None,
                   refused: type[FetchError] = FetchError) -> None:
    """Writes the body of GET `url` to `target`, each chunk also given to `on_chunk`."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        with httpx.stream("GET", url, headers=headers, timeout=TIMEOUT, follow_redirects=True) as response:
            refuse_unless_ok(response, url, what, refused)
            with target.open("wb") as out:
                for chunk in response.iter_bytes(CHUNK):
                    if on_chunk is not None:
                        on_chunk(chunk)
                    out.write(chunk)
    except httpx.TransportError as exc:
        raise NotAnswered(f"the control plane did not answer: {exc or type(exc).__name__}") from exc


def refuse_unless_ok(response: httpx.Response, url: str, what: str, refused: type[FetchError]) -> None:
    if response.status_code == 200:
        return
    response.read()
    detail = _detail(response)
    if response.status_code >= 500 or response.status_code == 429:
        raise NotAnswered(f"HTTP {response.status_code} from the control plane: {detail}",
                          retry_after_s=_retry_after_s(response))
    raise refused(f"the control plane refused the {what} (HTTP {response.status_code}): {detail}")


def with_retries(fetch: Callable[[], None], url: str, what: str, patience: Patience = PATIENCE,
                 refused: type[FetchError] = FetchError, on_wait: Callable[[str], None] | None = None) -> None:
    """Runs `fetch` until it succeeds, while its failures may pass (see the module's docstring)."""
    say = on_wait or log.warning
    started, backoff, tries, wrong = patience.clock(), patience.first_wait_s, 0, 0
    while True:
        tries += 1
        try:
            return fetch()
        except WrongBytes as exc:
            wrong += 1
            if wrong >= patience.wrong_bytes_tries:
                raise refused(f"the {what} fetched from {url} arrived wrong {wrong} times: {exc}") from exc
            say(f"the {what} arrived wrong ({exc}); fetching it again")
        except NotAnswered as exc:
            waited = patience.clock() - started
            left = patience.window_s - waited
            if left <= 0:
                raise refused(f"the {what} was not fetched from {url}: the control plane did not give it in "
                              f"{waited:.3g} s and {tries} tries (a fetch waits up to {patience.window_s:.3g} s); "
                              f"last: {exc}") from exc
            pause = min(exc.retry_after_s if exc.retry_after_s is not None else backoff, left)
            say(f"the {what} is not fetched yet ({exc}); trying again in {pause:.3g} s, "
                f"for up to {left:.3g} s more")
            patience.sleep(pause)
            backoff = min(backoff * 2, patience.max_wait_s)


def _detail(response: httpx.Response) -> str:
    try:
        detail = response.json().get("detail", response.text)
    except (ValueError, AttributeError):
        detail = response.text
    return str(detail)[:300]


def _retry_after_s(response: httpx.Response) -> float | None:
    """Retry-After in seconds, when the answer gives it so (an HTTP date is left to the backoff)."""
    value = response.headers.get("Retry-After", "").strip()
    return float(value) if value.isdigit() else None
