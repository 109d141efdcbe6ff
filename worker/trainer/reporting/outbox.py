"""The reporter's disk state: every event ever emitted (the local JSONL copy) and how far the
control plane has acknowledged. Together they let a restarted process resend exactly what
was not yet stored, with the same sequence numbers, so nothing is lost or doubled.
"""
import json
import os
from pathlib import Path


class Outbox:
    def __init__(self, folder: Path, source: str):
        folder.mkdir(parents=True, exist_ok=True)
        safe = source.replace(":", "-")
        self.events_path = folder / f"events-{safe}.jsonl"
        self.acked_path = folder / f"acked-{safe}.txt"
        self._file = self.events_path.open("a", encoding="utf-8")

    def last_seq(self) -> int:
        last = 0
        for event in self.read_all():
            last = event["seq"]
        return last

    def acked_seq(self) -> int:
        try:
            return int(self.acked_path.read_text().strip() or 0)
        except FileNotFoundError:
            return 0

    def unacked(self) -> list[dict]:
        acked = self.acked_seq()
        return [event for event in self.read_all() if event["seq"] > acked]

    def append(self, event: dict) -> None:
        self._file.write(json.dumps(event, separators=(",", ":")) + "\n")
        self._file.flush()

    def mark_acked(self, seq: int) -> None:
        # Write-then-rename so a crash never leaves a torn number behind.
        temporary = self.acked_path.with_suffix(".tmp")
        temporary.write_text(str(seq))
        os.replace(temporary, self.acked_path)

    def read_all(self):
        if not self.events_path.exists():
            return
        with self.events_path.open(encoding="utf-8") as lines:
            for line in lines:
                if line.endswith("\n"):  # a torn last line from a crash was never acknowledged
                    yield json.loads(line)

    def close(self) -> None:
        self._file.close()
