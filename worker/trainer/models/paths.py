"""Where models live, and which `model` strings a run may name: names, not paths.

A run's `model` is a hub id (`org/name` or `name`), which finds the copy an operator prepared
under DATA_DIR/models/<name> when there is one; or a path inside DATA_DIR/models or inside a
directory the operator lists in MODEL_DIRS (comma-separated, empty by default). Any other path is
refused: a user must not train from, and export, weights that another user's run wrote on the
worker's disk. The control plane refuses such a model when a run is created; the worker refuses
it again here, where it resolves what to load, so an older control plane's spec cannot name one.
"""
import os
from pathlib import Path

from worker.trainer.hub_ids import is_hub_id

PROJECT_ROOT = Path(__file__).resolve().parents[3]
MARKER = ".prepared.json"  # written last by prepare.py: the directory is complete
MODEL_DIRS_SETTING = "MODEL_DIRS"


class ModelNotFoundError(ValueError):
    """The model names an allowed local path that does not exist."""


class ModelRefused(ValueError):
    """The model is neither a hub id nor a path inside a directory the operator allows."""


def data_dir() -> Path:
    """DATA_DIR from the environment, default ./var, relative to the project root.

    The same rule as worker.celery_app.data_dir, which the trainer must not import (Celery).
    """
    path = Path(os.environ.get("DATA_DIR") or "var").expanduser()
    return path if path.is_absolute() else (PROJECT_ROOT / path).resolve()


def models_dir(base: Path | str | None = None) -> Path:
    return Path(base or data_dir()) / "models"


def operator_model_dirs() -> list[Path]:
    """The directories listed in MODEL_DIRS (comma-separated absolute paths), links resolved.
    Read from the environment: the trainer may not import Django's settings, which read it too."""
    listed = [Path(part.strip()) for part in os.environ.get(MODEL_DIRS_SETTING, "").split(",") if part.strip()]
    if relative := [str(path) for path in listed if not path.is_absolute()]:
        raise ValueError(f"{MODEL_DIRS_SETTING} lists directories as absolute paths, separated by commas; "
                         f"not {', '.join(relative)}")
    return [path.resolve() for path in listed]


def allowed_model_roots(base: Path | str | None = None) -> list[Path]:
    return [models_dir(base).resolve(), *operator_model_dirs()]


def is_model_dir(path: Path) -> bool:
    return (path / "config.json").is_file()


def accepted_models() -> str:
    """What a `model` may be, in words, for every refusal to say."""
    return ("a hub id (org/name or name), the name of a model prepared under the data directory's models/, "
            f"or an absolute path inside a directory the operator lists in the {MODEL_DIRS_SETTING} setting")


def model_problem(model: str, base: Path | str | None = None) -> str | None:
    """Why `model` may not be loaded, or None. A path's links and '..' are resolved before its
    place is judged; whether an allowed path exists is left to the loading (ModelNotFoundError)."""
    try:
        allowed_local_path(model, base)
    except ModelRefused as exc:
        return str(exc)
    return None


def allowed_local_path(model: str, base: Path | str | None = None) -> Path | None:
    """The resolved path `model` names when it is an allowed one; None for a hub id; else ModelRefused."""
    if is_hub_id(model):
        if Path(model).exists():  # transformers and vLLM would read it as a folder here
            raise ModelRefused(f"model {model!r} names a local folder where the trainer runs, not a hub id: it "
                               f"must be {accepted_models()}")
        return None
    if not model.startswith("/"):
        raise ModelRefused(f"model {model!r} is not accepted: it must be {accepted_models()}")
    path = Path(model).resolve()
    if not any(path.is_relative_to(root) for root in allowed_model_roots(base)):
        raise ModelRefused(f"model {model!r} is a path outside the directories the operator allows: it must be "
                           f"{accepted_models()}")
    return path


def resolve_model_path(model: str, base: Path | str | None = None) -> str:
    """A local directory for `model` when there is one, else `model` itself (a hub id).

    A hub id finds DATA_DIR/models/<its last part> when a model was prepared there (so the
    default hub id finds the converted SmolLM2), and is never read as a directory relative to
    where the process runs. An allowed path that does not exist raises ModelNotFoundError; any
    other path, or a string that is neither, ModelRefused.
    """
    local = allowed_local_path(model, base)
    if local is None:
        prepared = models_dir(base) / model.rsplit("/", 1)[-1]
        return str(prepared) if is_model_dir(prepared) else model
    if not local.is_dir():
        raise ModelNotFoundError(f"model directory {model!r} does not exist")
    return str(local)
