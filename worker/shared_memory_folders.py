"""The attempts' folders in /dev/shm, which are memory: one left behind holds a copy of the model
until the machine restarts. The supervisor removes its own when the run ends, but a supervisor
killed with its worker (SIGKILL, the OOM killer) cannot, so each holds an flock on a file in its
folder while it lives, which the kernel drops however the process ends; the next attempt on the
machine removes the folders whose lock nobody holds."""
import fcntl
import os
import shutil
import stat
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO

LOCK_NAME = ".owner.lock"
ATTEMPT_GLOB = "grpo-run-*-attempt-*"
# A lock file younger than this may be between its creation and its maker's flock: left alone.
SETTLE_S = 30.0


def attempt_prefix(run_id: int, attempt: int) -> str:
    return f"grpo-run-{run_id}-attempt-{attempt}-"


@dataclass
class ClaimedFolder:
    """A private folder and the open lock file that claims it for as long as it is open."""
    path: Path
    lock: IO

    @classmethod
    def make(cls, prefix: str, root: Path) -> "ClaimedFolder":
        path = Path(tempfile.mkdtemp(prefix=prefix, dir=root))
        lock = open(path / LOCK_NAME, "w")
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return cls(path, lock)

    def remove(self) -> None:
        """The folder and what is in it gone, then the claim let go."""
        shutil.rmtree(self.path, ignore_errors=True)
        self.lock.close()


def remove_orphans(root: Path, pattern: str = ATTEMPT_GLOB) -> list[Path]:
    """Removes this user's folders under `root` named like `pattern` whose lock nobody holds; their names."""
    removed = []
    for folder in root.glob(pattern):
        if _orphaned(folder):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed


def _orphaned(folder: Path) -> bool:
    lock_path = folder / LOCK_NAME
    try:
        found = folder.lstat()  # a link another user planted in the shared /dev/shm is not followed
        if not stat.S_ISDIR(found.st_mode) or found.st_uid != os.getuid():
            return False
        if time.time() - lock_path.stat().st_mtime < SETTLE_S:
            return False
        with open(lock_path) as lock:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)  # released as the file closes
            return True
    except (FileNotFoundError, NotADirectoryError, BlockingIOError, PermissionError):
        return False  # without a lock (made by an earlier version), or still held
