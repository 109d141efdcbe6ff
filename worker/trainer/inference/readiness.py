"""Waiting for an inference server that someone else started (the worker's supervisor).

The supervisor starts vLLM and the trainer together so that the two load their
models at the same time; the trainer then waits here, after its own loading,
for the server to answer /health.
"""
import time
from collections.abc import Callable

import httpx

from worker.trainer.inference.api_key_guard import bearer

POLL_S = 0.25


class ServerNotReady(RuntimeError):
    pass


def wait_for_health(url: str, timeout_s: float, should_stop: Callable[[], bool] = lambda: False,
                    api_key: str | None = None) -> float:
    """Seconds waited until `url`/health answered 200; ServerNotReady after `timeout_s`. The server's
    `api_key` is sent though /health does not ask for it: one rule, every request carries it."""
    started = time.monotonic()
    with httpx.Client(timeout=2.0, headers=bearer(api_key)) as http:
        while True:
            try:
                if http.get(url.rstrip("/") + "/health").status_code == 200:
                    return time.monotonic() - started
            except httpx.TransportError:
                pass
            waited = time.monotonic() - started
            if should_stop():
                raise ServerNotReady(f"stopped waiting for the inference server at {url} after {waited:.0f} s")
            if waited > timeout_s:
                raise ServerNotReady(f"the inference server at {url} did not answer /health within {timeout_s:.0f} s")
            time.sleep(POLL_S)
