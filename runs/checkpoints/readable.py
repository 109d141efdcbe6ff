"""A listed checkpoint's files wherever this control plane can read them, or why not.

An uploaded checkpoint is read from the artifact store (this disk or a bucket); another is read
where its trainer wrote it, under RUNS_DIR/<run id>/, and only there: a folder reported outside
the run's own directory, or gone, is CheckpointUnreadable, saying why. The download views answer
it as a 404, the Hub push's task as a failed push.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from django.conf import settings

from runs.artifacts import checkpoint_store as store
from runs.artifacts.checkpoint_files import CheckpointFile, folder_files
from runs.artifacts.export import tar_member
from runs.artifacts.stores import step_folder
from worker.trainer.checkpoints.manifest import ARCHIVE_MANIFEST, CheckpointManifest

if TYPE_CHECKING:  # the tables are named, never loaded: runs.models imports this package
    from runs.checkpoints.models.checkpoint import Checkpoint
    from runs.training_runs.models import Run


class CheckpointUnreadable(Exception):
    """The checkpoint's files are not where this control plane can read them; the message says why."""


def checkpoint_folder(run: Run, reported_path: str) -> Path:
    """The checkpoint's folder if it lies inside this run's directory here and exists."""
    run_dir = (Path(settings.RUNS_DIR) / str(run.pk)).resolve()
    folder = Path(reported_path).resolve()
    if not folder.is_relative_to(run_dir):
        raise CheckpointUnreadable("this checkpoint was written outside this control plane's run directory "
                                   "(on a worker on another machine?); fetch it from there")
    if not folder.is_dir():
        raise CheckpointUnreadable(
            "this checkpoint's files are no longer on disk (pruned by save_total_limit, or removed)")
    return folder


def stored_files(run_id: int, step: int) -> list[CheckpointFile]:
    """An uploaded checkpoint's files in the artifact store."""
    if not (files := store.checkpoint_files(run_id, step)):
        raise CheckpointUnreadable("this checkpoint's files are no longer in the control plane's store")
    return files


def files_of(checkpoint: Checkpoint) -> list[CheckpointFile]:
    """The checkpoint's files wherever this control plane can read them."""
    if checkpoint.in_store:
        return stored_files(checkpoint.run_id, checkpoint.step)
    return folder_files(checkpoint_folder(checkpoint.run, checkpoint.path))


def folder_name(checkpoint: Checkpoint) -> str:
    return step_folder(checkpoint.step) if checkpoint.in_store else Path(checkpoint.path).name


def manifest_members(checkpoint: Checkpoint) -> list[bytes]:
    """The manifest the checkpoint's files were checked against on upload, as the worker's fetch
    reads it beside the folder (worker/trainer/checkpoints/fetch.py); none when not kept."""
    if not (checkpoint.in_store and checkpoint.files):
        return []
    kept = CheckpointManifest(step=checkpoint.step, model_version=checkpoint.model_version,
                              local_path=checkpoint.path or "?", files=checkpoint.files)
    return [tar_member(ARCHIVE_MANIFEST, kept.model_dump_json().encode())]
