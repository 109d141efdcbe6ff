"""SECRET_KEY generated once into the data directory when none is given."""
import secrets
from pathlib import Path


def load_or_create_secret_key(data_dir: Path) -> str:
    path = data_dir / "secret_key"
    if path.exists():
        return path.read_text().strip()
    data_dir.mkdir(parents=True, exist_ok=True)
    key = secrets.token_urlsafe(50)
    # Create with owner-only permissions; O_EXCL makes a concurrent second
    # process fail instead of overwriting the key the first one is using.
    try:
        fd = path.open("x", encoding="utf-8")
    except FileExistsError:
        return path.read_text().strip()
    with fd:
        path.chmod(0o600)
        fd.write(key)
    return key
