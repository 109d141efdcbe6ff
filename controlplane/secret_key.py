"""SECRET_KEY generated once into the data directory when none is given."""
import os
import secrets
from pathlib import Path


def load_or_create_secret_key(data_dir: Path) -> str:
    path = data_dir / "secret_key"
    if path.exists():
        return path.read_text().strip()
    data_dir.mkdir(parents=True, exist_ok=True)
    key = secrets.token_urlsafe(50)
    # Owner-only from the first byte, and O_EXCL so that a second process starting
    # at the same moment reads the first one's key instead of overwriting it.
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return _read_when_written(path)
    with os.fdopen(fd, "w") as out:
        out.write(key)
    return key


def _read_when_written(path: Path) -> str:
    import time

    for _ in range(50):
        key = path.read_text().strip()
        if key:
            return key
        time.sleep(0.02)
    raise RuntimeError(f"{path} exists but stays empty; delete it to generate a new key")
