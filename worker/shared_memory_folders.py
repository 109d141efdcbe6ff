"""The attempts' folders in /dev/shm, which are memory: one left behind holds a copy of the model
until the machine restarts. The supervisor removes its own when the run ends, but a supervisor
killed with its worker (SIGKILL, the OOM killer) cannot, so each holds an flock on a file in its
folder while it lives, which the kernel drops however the process ends; the next attempt on the
machine removes the folders whose lock nobody holds."""
import fcntl
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import IO

LOCK_NAME = ".owner.lock"
PREFIX = "grpo-run-"
# A lock file younger than this may be between its creation and its maker's flock: left alone.
SETTLE_S = 30.0


def claimed_folder(prefix: str, root: Path) -> tuple[Path, IO]:
    """A new private folder under `root` and the open lock file that claims it: keep it open for
    as long as the folder is in use (closing it, or the process ending, frees the folder)."""
    folder = Path(tempfile.mkdtemp(prefix=prefix, dir=root))
    lock = open(folder / LOCK_NAME, "w")
    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    return folder, lock


def remove_orphans(root: Path, prefix: str = PREFIX) -> list[Path]:
    """Removes this user's `prefix` folders under `root` whose lock nobody holds; their names."""
    removed = []
    for folder in root.glob(prefix + "*"):
        if _orphaned(folder):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed


def _orphaned(folder: Path) -> bool:
    lock_path = folder / LOCK_NAME
    try:
        if folder.stat().st_uid != os.getuid() or time.time() - lock_path.stat().st_mtime < SETTLE_S:
            return False
        with open(lock_path) as lock:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)  # released as the file closes
            return True
    except (FileNotFoundError, NotADirectoryError, BlockingIOError, PermissionError):
        return False  # not ours, without a lock (made by an earlier version), or still held
