"""Sends events to the control plane in the background, in order, surviving its absence.

`emit` validates an event, numbers it, writes it to the local JSONL copy and
returns at once; a sender thread batches what is unacknowledged and posts it.
When the control plane is unreachable the events wait on disk and are retried
with backoff; a batch the control plane refuses (4xx) is logged and skipped so
one bad event cannot wedge the run's reporting forever. A batch is bounded in bytes as well as
in events, well under the control plane's INGEST_BATCH_MAX_MB (32 MiB by default), so a backlog of
large samples events is sent in several batches instead of being refused (and skipped) whole.
"""
import json
import logging
import threading
import time
from collections import deque
from pathlib import Path
from collections.abc import Callable

from worker.trainer.events import IngestReply, event_adapter
from worker.trainer.reporting.client import IngestClient, IngestRejected, IngestUnreachable
from worker.trainer.reporting.outbox import Outbox

log = logging.getLogger(__name__)
MAX_BATCH_BYTES = 8 * 1024 * 1024


class Reporter:
    def __init__(self, client: IngestClient | None, folder: Path, flush_interval_s: float = 1.0,
                 max_batch: int = 500, max_backoff_s: float = 30.0, max_batch_bytes: int = MAX_BATCH_BYTES,
                 on_reply: Callable[[IngestReply], None] | None = None, source: str = "trainer"):
        """With no client (offline), events only go to the local JSONL copy."""
        self.client = client
        self.outbox = Outbox(folder, client.source if client else source)
        self.flush_interval_s, self.max_batch, self.max_backoff_s = flush_interval_s, max_batch, max_backoff_s
        self.max_batch_bytes = max_batch_bytes
        self.on_reply = on_reply
        self.last_reply: IngestReply | None = None
        # Offline, nothing is sent: what an earlier reporter left unacknowledged stays on disk for
        # one with a client (a supervisor's), instead of a backlog that could never drain.
        self._pending: deque[dict] = deque(self.outbox.unacked() if client is not None else ())
        self._seq = self.outbox.last_seq()
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name="reporter", daemon=True)

    def start(self) -> "Reporter":
        self._thread.start()
        return self

    def emit(self, event: dict) -> int:
        """Numbers, checks and queues one event (without `seq`); returns its sequence number."""
        with self._lock:
            self._seq += 1
            numbered = {**event, "seq": self._seq}
            numbered.setdefault("time", time.time())
            event_adapter.validate_python(numbered)  # a bad event fails here, in the caller
            self.outbox.append(numbered)
            if self.client is not None:
                self._pending.append(numbered)
        if len(self._pending) >= self.max_batch:
            self._wake.set()
        return numbered["seq"]

    def send_soon(self) -> None:
        """Sends what is queued now rather than at the next interval (someone is waiting for it)."""
        self._wake.set()

    def flush(self, timeout_s: float = 30.0) -> bool:
        """Blocks until everything emitted so far is acknowledged (True) or the timeout passes."""
        deadline = time.monotonic() + timeout_s
        while self._pending and time.monotonic() < deadline:
            self._wake.set()
            time.sleep(0.05)
        return not self._pending

    def close(self, timeout_s: float = 30.0) -> bool:
        delivered = self.flush(timeout_s)
        self._stopping.set()
        self._wake.set()
        self._thread.join(timeout=5)
        self.outbox.close()
        if self.client is not None:
            self.client.close()
        return delivered

    @property
    def backlog(self) -> int:
        return len(self._pending)

    def _run(self) -> None:
        if self.client is None:
            return  # offline: nothing is ever pending
        backoff = self.flush_interval_s
        while not self._stopping.is_set():
            self._wake.wait(timeout=backoff)
            self._wake.clear()
            try:
                while self._pending and not self._stopping.is_set():
                    self._send_one_batch(self.client)
                backoff = self.flush_interval_s
            except IngestUnreachable as exc:
                backoff = min(max(backoff * 2, 0.5), self.max_backoff_s)
                log.warning("control plane unreachable, %d events kept on disk: %s", len(self._pending), exc)

    def _next_batch(self) -> list[dict]:
        """The oldest pending events, up to max_batch of them and max_batch_bytes of JSON (one at least)."""
        batch: list[dict] = []
        size = 0
        for event in list(self._pending)[:self.max_batch]:
            size += len(json.dumps(event, separators=(",", ":")))
            if batch and size > self.max_batch_bytes:
                break
            batch.append(event)
        return batch

    def _send_one_batch(self, client: IngestClient) -> None:
        batch = self._next_batch()
        try:
            reply = client.send(batch)
        except IngestRejected as exc:
            log.error("control plane refused %d events (seq %d-%d), skipping them: %s",
                      len(batch), batch[0]["seq"], batch[-1]["seq"], exc)
            reply = None
        if reply is not None:  # before the batch leaves the queue: flush() returns once it has
            self.last_reply = reply
            if self.on_reply:
                self.on_reply(reply)
        with self._lock:
            for _ in batch:
                self._pending.popleft()
        self.outbox.mark_acked(batch[-1]["seq"])
