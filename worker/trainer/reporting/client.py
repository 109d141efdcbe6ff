"""One HTTP client for the ingest API: explicit timeouts, retries with backoff, a typed reply."""
import time

import httpx

from worker.trainer.events import IngestReply

RETRYABLE_STATUS = {408, 425, 429, 500, 502, 503, 504}


class IngestRejected(Exception):
    """The control plane refused the batch (4xx): retrying the same batch cannot help."""

    def __init__(self, status_code: int, body: str):
        self.status_code = status_code
        super().__init__(f"ingest refused the batch with HTTP {status_code}: {body[:500]}")


class IngestUnreachable(Exception):
    """No answer after every retry; the caller keeps the batch and tries again later."""


class IngestClient:
    def __init__(self, url: str, token: str, source: str, timeout_s: float = 10.0,
                 retries: int = 3, backoff_s: float = 0.5, transport: httpx.BaseTransport | None = None):
        self.url, self.source = url, source
        self.retries, self.backoff_s = retries, backoff_s
        self._http = httpx.Client(timeout=timeout_s, transport=transport,
                                  headers={"Authorization": f"Bearer {token}"})

    def send(self, events: list[dict]) -> IngestReply:
        body = {"source": self.source, "events": events}
        last_error = "no attempt made"
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(self.backoff_s * 2 ** (attempt - 1))
            try:
                response = self._http.post(self.url, json=body)
            except httpx.TransportError as exc:
                last_error = f"{type(exc).__name__}: {exc}"
                continue
            if response.status_code == 200:
                return IngestReply.model_validate(response.json())
            if response.status_code not in RETRYABLE_STATUS:
                raise IngestRejected(response.status_code, response.text)
            last_error = f"HTTP {response.status_code}"
        raise IngestUnreachable(f"{self.url} did not take the batch after {self.retries + 1} tries ({last_error})")

    def close(self) -> None:
        self._http.close()
