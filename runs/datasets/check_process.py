"""Checks an upload in a process of its own, killed past DATASET_CHECK_TIMEOUT_S, its memory capped.

A check reads every row: about 20 s of one core for 200 MB of small JSONL rows, which in a thread
of the web server holds the GIL every other request needs, and a Parquet file of a few KB may
decode to gigabytes. So every Parquet file, and any upload spooled to disk, is checked by
check_child.py, which is given a path, the limits, and nothing else of the server's; a small
JSONL or CSV upload (in memory, at most FILE_UPLOAD_MAX_MEMORY_SIZE) is checked in place.
"""
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from django.conf import settings

from runs.datasets.formats import DatasetFileError
from worker.trainer.for_control_plane.sandbox import protocol

ROOT = Path(__file__).resolve().parents[2]
START_ALLOWANCE_S = 30.0  # Python, Django's settings and pyarrow imported before the first row
LIMITS = ("DATASET_ROW_MAX_BYTES", "DATASET_CHECK_TIMEOUT_S", "DATASET_UPLOAD_MAX_BYTES", "DATASET_EXPANSION_MAX")


def inspect_path(path: str, fmt: str, prompt_column: str, progress=None) -> dict:
    """What the dataset stores of its check (Inspection.stored_fields()); DatasetFileError otherwise.
    `progress(rows, bytes_read)`, when given, is told how far the child has read as it goes."""
    child = subprocess.Popen([sys.executable, "-m", "runs.datasets.check_child"], cwd=ROOT,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             start_new_session=True, env={"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"})
    assert child.stdin is not None and child.stdout is not None  # both PIPE
    limit_s = settings.DATASET_CHECK_TIMEOUT_S
    try:
        protocol.write_frame(child.stdin.fileno(), {
            "path": str(path), "format": fmt, "prompt_column": prompt_column,
            "limits": {name: getattr(settings, name) for name in LIMITS}})
        reply = _reply(child, time.monotonic() + limit_s + START_ALLOWANCE_S, progress)
    except TimeoutError:
        raise DatasetFileError(f"checking the file took longer than {limit_s} s (DATASET_CHECK_TIMEOUT_S) and was "
                               "stopped; upload fewer rows") from None
    except (EOFError, BrokenPipeError, protocol.FrameError):
        raise DatasetFileError("checking the file failed (out of memory?); nothing was stored") from None
    finally:
        child.kill()
        child.wait()
        for stream in (child.stdin, child.stdout):
            stream.close()
    if not reply.get("ok"):
        raise DatasetFileError(str(reply.get("message")), field=str(reply.get("field") or "file"))
    return reply["inspection"]


def inspect_copy(fileobj, fmt: str, prompt_column: str) -> dict:
    """inspect_path for an upload held in memory: copied to a temporary file the child can open,
    removed after. The upload is left at its start, for saving."""
    with tempfile.NamedTemporaryFile(suffix=f".{fmt}", dir=settings.FILE_UPLOAD_TEMP_DIR) as copy:
        fileobj.seek(0)
        shutil.copyfileobj(fileobj, copy)
        copy.flush()
        fileobj.seek(0)
        return inspect_path(copy.name, fmt, prompt_column)


def _reply(child, deadline: float, progress) -> dict:
    """The child's answer, after the progress frames it sends before it."""
    while "progress" in (frame := protocol.read_frame(child.stdout.fileno(), 16 << 20, deadline)):
        if progress is not None:
            progress(int(frame["progress"]["rows"]), frame["progress"].get("bytes"))
    return frame
