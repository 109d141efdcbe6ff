"""The process that checks an upload (check_process.py is the parent): every Parquet file and any
file spooled to disk, read where a time limit can stop it and a memory cap (MEMORY_BYTES) holds.

Started as `python -m runs.datasets.check_child`; reads one frame {path, format, prompt_column,
limits}, sends {"progress": {"rows", "bytes"}} frames at most every PROGRESS_EVERY_S while it reads,
and answers one: {"ok": true, "inspection": {...}} or {"ok": false, "message", "field"}.
Django's settings are configured here from the limits sent, without a database.
"""
import resource
import sys
import time

from worker.trainer.for_control_plane.sandbox import protocol

MEMORY_BYTES = 4 * 1024 ** 3
PROGRESS_EVERY_S = 0.5


def main() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))
    request = protocol.read_frame(sys.stdin.fileno(), 1 << 20)
    from django.conf import settings

    settings.configure(**request["limits"])
    from runs.datasets.formats import DatasetFileError, read_rows
    from runs.datasets.validation import inspect_rows

    try:
        with open(request["path"], "rb") as source:
            progress = progress_sender(source, request["format"])
            rows = read_rows(source, request["format"])
            inspection = inspect_rows(rows, request["prompt_column"], progress=progress)
        reply = {"ok": True, "inspection": inspection.stored_fields()}
    except DatasetFileError as exc:
        reply = {"ok": False, "message": str(exc), "field": exc.field}
    except MemoryError:
        reply = {"ok": False, "message": "checking the file ran out of memory", "field": "file"}
    protocol.write_frame(sys.stdout.fileno(), reply)


def progress_sender(source, fmt: str):
    """Tells the parent how many rows (and, for text files, bytes) have been read, now and then.
    A Parquet reader seeks about the file: its position says nothing of how far it is."""
    last = [0.0]

    def send(rows: int) -> None:
        if time.monotonic() - last[0] >= PROGRESS_EVERY_S:
            last[0] = time.monotonic()
            read = None if fmt == "parquet" else source.tell()
            protocol.write_frame(sys.stdout.fileno(), {"progress": {"rows": rows, "bytes": read}})
    return send


if __name__ == "__main__":
    main()
