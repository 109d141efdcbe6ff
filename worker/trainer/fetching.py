"""Files a worker fetches from the control plane with the run's token: an uploaded dataset
(data/fetch.py), a checkpoint to resume from (checkpoint_fetch.py).

A fetch the control plane may answer later (it is away, answers 5xx, the bytes came wrong) is
tried again with a growing pause; a refusal (not this run's, gone) is final and says why.
"""
import time
from collections.abc import Callable
from pathlib import Path

import httpx

CHUNK = 1024 * 1024


class FetchError(ValueError):
    """What the worker needed could not be had; the message says why."""


class RetryableFetchError(Exception):
    """A fetch that may succeed when tried again."""


def stream_to_file(url: str, token: str | None, target: Path, what: str, on_chunk: Callable[[bytes], None] = None,
                   refused: type[FetchError] = FetchError) -> None:
    """Writes the body of GET `url` to `target`, each chunk also given to `on_chunk`."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        with httpx.stream("GET", url, headers=headers, timeout=120, follow_redirects=True) as response:
            refuse_unless_ok(response, url, what, refused)
            with target.open("wb") as out:
                for chunk in response.iter_bytes(CHUNK):
                    if on_chunk is not None:
                        on_chunk(chunk)
                    out.write(chunk)
    except httpx.TransportError as exc:
        raise RetryableFetchError(f"the control plane did not answer: {exc}") from exc


def refuse_unless_ok(response: httpx.Response, url: str, what: str, refused: type[FetchError]) -> None:
    if response.status_code == 200:
        return
    response.read()
    if response.status_code >= 500:
        raise RetryableFetchError(f"HTTP {response.status_code} from {url}")
    try:
        detail = response.json().get("detail", response.text)
    except ValueError:
        detail = response.text
    raise refused(f"the control plane refused the {what} (HTTP {response.status_code}): {str(detail)[:300]}")


def with_retries(fetch: Callable[[], None], url: str, what: str, attempts: int, backoff_s: float,
                 refused: type[FetchError] = FetchError) -> None:
    """Runs `fetch` until it succeeds, at most `attempts` times, while its failures may pass."""
    for attempt in range(1, attempts + 1):
        try:
            return fetch()
        except RetryableFetchError as exc:
            if attempt == attempts:
                raise refused(f"{what} not fetched from {url} after {attempts} tries: {exc}") from exc
            time.sleep(backoff_s * attempt)
