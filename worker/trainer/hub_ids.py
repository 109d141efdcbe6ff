"""Hub ids, never paths: the shape a Hugging Face Hub repo id has, for models and datasets alike.

`datasets.load_dataset(x)` and `from_pretrained(x)` read a local folder when `x` names one, so
a user's hub id must not: it has the Hub's shape (one or two parts, no '..', no leading '-' or
'/'), and no file or folder of that name lies where the process runs (a relative name such as
`var/cache` is hub-shaped too).
"""
import re
from pathlib import Path

# huggingface_hub's validate_repo_id: one or two parts of letters, digits, '_', '-' and '.', each
# starting and ending with a letter, digit or '_'; no '--' or '..'; at most 96 characters.
_PART = r"[A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_])?"
_HUB_ID = re.compile(rf"{_PART}(?:/{_PART})?")
MAX_LENGTH = 96


def is_hub_id(name: str) -> bool:
    return (len(name) <= MAX_LENGTH and _HUB_ID.fullmatch(name) is not None
            and ".." not in name and "--" not in name and not name.endswith(".git"))


def local_builders() -> frozenset[str]:
    """Names `datasets.load_dataset` reads as one of its own builders (json, csv, ...) rather
    than a hub id; empty where datasets is not installed (the control plane)."""
    try:
        from datasets.packaged_modules import _PACKAGED_DATASETS_MODULES
    except ImportError:
        return frozenset()
    return frozenset(_PACKAGED_DATASETS_MODULES)


def dataset_hub_id_problem(hub_id: str) -> str | None:
    """Why `hub_id` may not be handed to datasets.load_dataset, or None."""
    if not is_hub_id(hub_id):
        return (f"{hub_id!r} is not a hub id: give one such as 'openai/gsm8k' (a local file is uploaded as a "
                "dataset, not named by its path)")
    if Path(hub_id).exists():
        return f"{hub_id!r} names a local file or folder here, not a hub dataset: give a hub id such as 'openai/gsm8k'"
    if hub_id in local_builders():
        return f"{hub_id!r} names one of the datasets library's local file readers, not a hub dataset"
    return None
