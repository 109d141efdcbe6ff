"""The check of an upload spooled to disk, after its request: the request stores the file and
answers with the dataset `checking`; the control plane's consumer (runs/datasets/tasks.py)
hashes it, checks every row in the killable process of check_process.py, and ends it `ready`
(with what the check stores) or `refused` (with the message the check in a request gives).

An upload small enough to stay in memory (FILE_UPLOAD_MAX_MEMORY_SIZE) is still checked in its
request, so that its refusal is the request's 400.
"""
import hashlib
from pathlib import Path

from runs.background.tasks import enqueue
from runs.datasets.check_process import inspect_path
from runs.datasets.formats import DatasetFileError
from runs.datasets.models import CheckState, Dataset

TASK = "check_dataset"
HASH_CHUNK_BYTES = 1 << 20


def checked_later(upload) -> bool:
    """Whether this upload is checked after its request: Django spooled it to disk, so it is large."""
    return hasattr(upload, "temporary_file_path")


def fields_while_checking(upload) -> dict:
    """What a dataset stores of an upload whose check has not run yet."""
    return {"state": CheckState.CHECKING, "size_bytes": upload.size,
            "check_progress": {"rows": 0, "bytes": 0, "total_bytes": upload.size}}


def check_after_commit(dataset: Dataset) -> None:
    enqueue(TASK, dataset.pk)


def check_stored(dataset_id: int) -> None:
    """Checks the stored file of a dataset still `checking`; nothing for one checked or deleted since."""
    dataset = Dataset.objects.filter(pk=dataset_id, state=CheckState.CHECKING).first()
    if dataset is None:
        return
    assert dataset.file.name is not None  # only a stored upload is checked here
    name = Path(dataset.file.name).name
    try:
        digest = sha256_of(dataset.file.path)
        inspection = inspect_path(dataset.file.path, dataset.file_format, dataset.prompt_column,
                                  progress=dataset.note_check_progress)
    except DatasetFileError as exc:
        dataset.refuse(f"{name}: {exc}", exc.field)
        return
    except FileNotFoundError:  # deleted with its dataset while this check ran
        return
    dataset.finish_check({**inspection, "sha256": digest, "check_progress": {
        **dataset.check_progress, "rows": inspection["row_count"], "bytes": dataset.size_bytes}})


def sha256_of(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as source:
        while chunk := source.read(HASH_CHUNK_BYTES):
            digest.update(chunk)
    return digest.hexdigest()
