"""The process that checks a large upload (check_process.py is the parent): the same inspection
the web server would run, where a time limit can stop it and a memory cap holds.

Started as `python -m runs.datasets.check_child`; reads one frame {path, format, prompt_column,
limits} and answers one: {"ok": true, "inspection": {...}} or {"ok": false, "message", "field"}.
Django's settings are configured here from the limits sent, without a database.
"""
import resource
import sys

from worker.trainer.rewards.sandbox import protocol

MEMORY_BYTES = 4 * 1024 ** 3


def main() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))
    request = protocol.read_frame(sys.stdin.fileno(), 1 << 20)
    from django.conf import settings

    settings.configure(**request["limits"])
    from runs.datasets.formats import DatasetFileError
    from runs.datasets.validation import inspect_file

    try:
        with open(request["path"], "rb") as source:
            inspection = inspect_file(source, request["format"], request["prompt_column"])
        reply = {"ok": True, "inspection": inspection.stored_fields()}
    except DatasetFileError as exc:
        reply = {"ok": False, "message": str(exc), "field": exc.field}
    except MemoryError:
        reply = {"ok": False, "message": "checking the file ran out of memory", "field": "file"}
    protocol.write_frame(sys.stdout.fileno(), reply)


if __name__ == "__main__":
    main()
