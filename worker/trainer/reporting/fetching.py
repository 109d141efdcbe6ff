"""Files a worker fetches from the control plane with the run's token: an uploaded dataset
(data/fetch.py), a checkpoint to resume from (checkpoints/fetch.py).

The control plane away or busy (no connection, a stream broken off, 5xx, 429): tried again, the
pause doubling from 1 s to 30 s, for up to FETCH_PATIENCE_S; each pause is said through the
caller's `on_wait`, else as a warning of this module's logger, which the worker forwards to the
run's log. Bytes that arrived wrong: fetched once more only. A refusal (any other 4xx): final at
once. A cut download goes on from the bytes on disk (HTTP Range); the whole is checked all the same.
Details: docs/capabilities/datasets.md#how-a-worker-gets-an-uploaded-dataset.
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


class Download:
    """GET `url` into `target`, going on where a broken connection stopped.

    A cut after some bytes arrived is resumed at once: the next GET asks for the bytes after
    those on disk (`Range: bytes=N-`), on condition that the control plane still serves the same
    bytes (`If-Range` with the ETag, else the Last-Modified, of the first answer). An answer
    of 200 instead of 206 (the file changed, or ranges are not served) starts the file over. A cut
    before any new byte is NotAnswered, which with_retries waits on; the bytes kept stay for the
    next try. The caller checks the result (a sha256, a manifest) and `discard`s it when wrong.
    """

    def __init__(self, url: str, token: str | None, target: Path, what: str,
                 refused: type[FetchError] = FetchError, say: Callable[[str], None] | None = None):
        self.url, self.token, self.target, self.what, self.refused = url, token, target, what, refused
        self.say = say or log.warning
        self.validator: str | None = None  # the ETag or Last-Modified of the bytes on disk

    def fetch(self) -> None:
        """The whole body in `target`; NotAnswered when a try brought no new byte."""
        while True:
            before = self.received()
            try:
                return self._get_from(before)
            except httpx.TransportError as exc:
                after = self.received()
                if after <= before or self.validator is None:
                    raise NotAnswered(f"the control plane did not answer: {exc or type(exc).__name__}") from exc
                self.say(f"the {self.what}'s download broke off after {after / 2 ** 20:.1f} MB "
                         f"({exc or type(exc).__name__}); going on from there")

    def received(self) -> int:
        """Bytes on disk that a resumed GET may go on from (none without a validator to resume on)."""
        return self.target.stat().st_size if self.validator and self.target.is_file() else 0

    def discard(self) -> None:
        """Forgets the bytes on disk (they arrived wrong): the next fetch starts over."""
        self.target.unlink(missing_ok=True)
        self.validator = None

    def _get_from(self, offset: int) -> None:
        headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        if offset and self.validator:  # received() gives an offset only with a validator
            headers |= {"Range": f"bytes={offset}-", "If-Range": self.validator}
        with httpx.stream("GET", self.url, headers=headers, timeout=TIMEOUT, follow_redirects=True) as response:
            if response.status_code == 416 and offset:
                if _complete_at(response, offset):
                    return  # every byte was already here
                self.discard()
                raise NotAnswered("the control plane holds fewer bytes than those kept here: starting over")
            refuse_unless_ok(response, self.url, self.what, self.refused)
            if response.status_code == 206 and not _content_range_from(response, offset):
                raise NotAnswered(f"the control plane answered a range other than bytes {offset}-: "
                                  f"{response.headers.get('Content-Range')}")
            if response.status_code == 200:
                offset = 0  # the whole body: the file changed, or ranges are not served
            self.validator = _validator(response)
            with self.target.open("r+b" if offset else "wb") as out:
                out.truncate(offset)
                out.seek(offset)
                for chunk in response.iter_bytes(CHUNK):
                    out.write(chunk)


def refuse_unless_ok(response: httpx.Response, url: str, what: str, refused: type[FetchError]) -> None:
    if response.status_code in (200, 206):
        return
    response.read()
    detail = _detail(response)
    if response.status_code >= 500 or response.status_code == 429:
        raise NotAnswered(f"HTTP {response.status_code} from the control plane: {detail}",
                          retry_after_s=_retry_after_s(response))
    raise refused(f"the control plane refused the {what} (HTTP {response.status_code}): {detail}")


def _validator(response: httpx.Response) -> str | None:
    """What an If-Range may name these bytes by: a strong ETag, else the Last-Modified date; None
    when the answer gives neither or takes no ranges (a cut then starts over)."""
    if response.headers.get("Accept-Ranges", "").lower() != "bytes":
        return None
    etag = response.headers.get("ETag")
    if etag and not etag.startswith("W/"):
        return etag
    return response.headers.get("Last-Modified")


def _content_range_from(response: httpx.Response, offset: int) -> bool:
    return response.headers.get("Content-Range", "").startswith(f"bytes {offset}-")


def _complete_at(response: httpx.Response, size: int) -> bool:
    """A 416 that says the whole is `size` bytes: those on disk are all of it."""
    return response.headers.get("Content-Range", "") == f"bytes */{size}"


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
