"""Where models live: DATA_DIR/models/<name>, and how a config's `model` string becomes a path."""
import os
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[3]
MARKER = ".prepared.json"  # written last by prepare.py: the directory is complete


class ModelNotFoundError(ValueError):
    """The model names a local path that does not exist."""


def data_dir() -> Path:
    """DATA_DIR from the environment, default ./var, relative to the project root.

    The same rule as worker.celery_app.data_dir, which the trainer must not import (Celery).
    """
    path = Path(os.environ.get("DATA_DIR") or "var").expanduser()
    return path if path.is_absolute() else (PROJECT_ROOT / path).resolve()


def models_dir(base: Path | str | None = None) -> Path:
    return Path(base or data_dir()) / "models"


def is_model_dir(path: Path) -> bool:
    return (path / "config.json").is_file()


def looks_like_path(model: str) -> bool:
    return model.startswith(("/", "./", "../", "~"))


def resolve_model_path(model: str, base: Path | str | None = None) -> str:
    """A local directory for `model` when there is one, else `model` itself (a hub id).

    In order: `model` as an existing directory; DATA_DIR/models/<last part of model> when a
    model was prepared there (so the default hub id finds the converted SmolLM2); the hub id
    unchanged. A path that does not exist (absolute, ./, ../ or ~) raises ModelNotFoundError.
    """
    local = Path(model).expanduser()
    if local.is_dir():
        return str(local.resolve())
    if looks_like_path(model):
        raise ModelNotFoundError(f"model directory {model!r} does not exist")
    prepared = models_dir(base) / model.rstrip("/").rsplit("/", 1)[-1]
    if is_model_dir(prepared):
        return str(prepared)
    return model
