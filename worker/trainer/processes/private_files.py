"""Files that hold a run's secrets (its ingest token, its vLLM key, its orders' secret).

Written readable by their owner alone from the first byte, and whole: the text goes to a new
file created with mode 0600 (O_EXCL: never an existing file or a planted symlink) beside the
target, which then replaces the target in one rename. A write-then-chmod would leave a moment
when the file is world-readable; a write in place, one when it is half-written.
"""
import os
import secrets
from pathlib import Path

OWNER_ONLY = 0o600


def write_private(path: Path, text: str) -> None:
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(8)}.tmp")
    fd = os.open(temporary, os.O_CREAT | os.O_EXCL | os.O_WRONLY, OWNER_ONLY)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
