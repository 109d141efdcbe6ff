"""A run's reporting session: the reporter, a heartbeat every few seconds, and the cancel flag."""
import threading
from pathlib import Path

from worker.trainer.events import IngestReply
from worker.trainer.reporting.client import IngestClient
from worker.trainer.reporting.reporter import Reporter


# An event's size: answers of up to max_completion_length tokens each.
ANSWERS_PER_EVENT = 256


# A step that keeps every completion (samples_groups_per_step 0) of thousands travels in several
# events of whole groups, each well under SamplesEvent's 1,024 records (num_generations ≤ 256).
SAMPLES_PER_EVENT = 256


def sample_chunks(records: list[dict], most: int) -> list[list[dict]]:
    """A step's records in runs of at most `most`, a group never split (a bigger one travels alone)."""
    chunks: list[list[dict]] = []
    current: list[dict] = []
    for index, record in enumerate(records):
        starts_group = index == 0 or record["group"] != records[index - 1]["group"]
        if current and starts_group and len(current) + _group_size(records, index) > most:
            chunks.append(current)
            current = []
        current.append(record)
    if current:
        chunks.append(current)
    return chunks


def _group_size(records: list[dict], start: int) -> int:
    end = start
    while end < len(records) and records[end]["group"] == records[start]["group"]:
        end += 1
    return end - start


def answer_chunks(examples: list[dict], most: int) -> list[list[dict]]:
    """Examples in runs of at most `most` answers (an example with more travels alone)."""
    chunks: list[list[dict]] = []
    current: list[dict] = []
    count = 0
    for example in examples:
        size = len(example["answers"])
        if current and count + size > most:
            chunks.append(current)
            current, count = [], 0
        current.append(example)
        count += size
    if current:
        chunks.append(current)
    return chunks


class ReportingSession:
    def __init__(self, ingest, source: str, folder: Path, heartbeat_s: float = 5.0, flush_interval_s: float = 1.0,
                 log_source: str = "trainer"):
        """`ingest` is the spec's IngestSpec, or None to keep events in the local JSONL only.
        `log_source`: what the run's log shows as the source of this session's own lines."""
        self.log_source = log_source
        self.cancel_requested = threading.Event()
        self.step = 0
        client = IngestClient(ingest.url, ingest.token, source=source) if ingest else None
        self.reporter = Reporter(client, folder, flush_interval_s=flush_interval_s, on_reply=self._on_reply,
                                 source=source)
        self._heartbeat_s = heartbeat_s
        self._stop = threading.Event()
        self._heart = threading.Thread(target=self._beat, name="heartbeat", daemon=True)

    def start(self) -> "ReportingSession":
        self.reporter.start()
        self._heart.start()
        return self

    def _on_reply(self, reply: IngestReply) -> None:
        if reply.cancel_requested:
            self.cancel_requested.set()

    def _beat(self) -> None:
        while not self._stop.wait(self._heartbeat_s):
            self.reporter.emit({"type": "heartbeat", "step": self.step})

    def status(self, status: str, message: str = "") -> None:
        self.reporter.emit({"type": "status", "status": status, "message": message})
        self.reporter.send_soon()  # a status is what a watching page waits for

    def log(self, message: str, level: str = "info", source: str | None = None) -> None:
        self.reporter.emit({"type": "log", "level": level, "source": (source or self.log_source)[:40],
                            "message": message[:20000]})

    def metrics(self, step: int, values: dict[str, float], send_now: bool = False) -> None:
        self.step = step
        self.reporter.emit({"type": "metrics", "step": step, "values": values})
        if send_now:
            self.reporter.send_soon()

    def samples(self, step: int, records: list[dict]) -> None:
        for part in sample_chunks(records, SAMPLES_PER_EVENT):
            self.reporter.emit({"type": "samples", "step": step, "samples": part})

    def evaluation(self, step: int, model_version: int, examples: list[dict], summary: dict[str, float]) -> None:
        """An evaluation's answers and its eval/ metrics. It may end after later training steps,
        so the heartbeat's step is left where training is."""
        for part in answer_chunks(examples, ANSWERS_PER_EVENT):
            self.reporter.emit({"type": "evaluation", "step": step, "model_version": model_version,
                                "examples": part})
        self.reporter.emit({"type": "metrics", "step": step, "values": summary})
        self.reporter.send_soon()

    def checkpoint(self, step: int, path: str, size_bytes: int, model_version: int) -> None:
        self.reporter.emit({"type": "checkpoint", "step": step, "path": path, "size_bytes": size_bytes,
                            "model_version": model_version})

    def close(self, timeout_s: float = 30.0) -> bool:
        self._stop.set()
        self._heart.join(timeout=self._heartbeat_s + 1)
        return self.reporter.close(timeout_s)
