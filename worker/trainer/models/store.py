"""Model directories appear whole or not at all: built in a staging dir, marked, renamed."""
import json
import os
import shutil
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

from worker.trainer.models.paths import MARKER

STALE_STAGING_S = 3600


def is_prepared(path: Path) -> bool:
    return (path / MARKER).is_file()


@contextmanager
def publish_atomically(target: Path, marker: dict):
    """Yield an empty staging directory; on success mark it and rename it to `target`.

    The marker is written last, inside the staging directory, so a directory at `target`
    always holds a complete model. An existing `target` (a forced rebuild, or a copy without
    a marker) is replaced. When another process published first, its copy is kept.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale_staging(target)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.staging-", dir=target.parent))
    try:
        yield staging
        (staging / MARKER).write_text(json.dumps(marker, indent=2) + "\n")
        staging.chmod(0o755)
        _swap_in(staging, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _swap_in(staging: Path, target: Path) -> None:
    old = None
    if target.exists():
        old = target.with_name(f".{target.name}.old-{os.getpid()}-{time.time_ns()}")
        target.rename(old)
    try:
        staging.rename(target)
    except OSError:
        if not is_prepared(target):
            raise
    finally:
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)


def _remove_stale_staging(target: Path) -> None:
    """Leftovers of killed builds; recent ones may belong to a build still running."""
    cutoff = time.time() - STALE_STAGING_S
    for leftover in target.parent.glob(f".{target.name}.*"):
        if leftover.is_dir() and leftover.stat().st_mtime < cutoff:
            shutil.rmtree(leftover, ignore_errors=True)
