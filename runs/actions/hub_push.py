"""Pushing a checkpoint to the Hugging Face Hub with a token the user gives for that push.

The push runs in a thread of the web process, not on a Celery worker: workers never touch the
database and may run on other machines, while the checkpoint's files are readable here (this
disk or the artifact store). The HubPush row is what pages and scripts poll; the thread writes
its progress and its outcome there. The token travels from the request to the thread's memory
and no further: it is never stored or logged, and is masked in any message that is.
"""
import logging
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings
from django.db import connections, transaction
from django.template.defaultfilters import filesizeformat
from django.views.decorators.debug import sensitive_variables
from huggingface_hub import HfApi

from runs.actions.hub_failures import EXPLAINED, failure_reason, without_secret
from runs.artifacts.checkpoint_files import CheckpointFile, copy_to_folder
from runs.artifacts.export import Exported, export_files
from runs.models import Checkpoint, HubPush

logger = logging.getLogger(__name__)

Job = Callable[[], None]
Runner = Callable[[Job], None]


@dataclass(frozen=True)
class PushRequest:
    repo_id: str
    token: str = field(repr=False)
    part: str = "model"
    private: bool = True


def run_in_background(job: Job) -> None:
    """Runs `job` in a thread of this process; the thread closes its database connections when done.

    A daemon thread: stopping the server does not wait for a push of gigabytes, it cuts it off
    (its row then stays `pushing`; pushing the checkpoint again is the remedy)."""
    def run_then_close():
        try:
            job()
        finally:
            connections.close_all()

    threading.Thread(target=run_then_close, name="hub-push", daemon=True).start()


@sensitive_variables("request", "token")
def start_push(checkpoint: Checkpoint, files: list[CheckpointFile], request: PushRequest, user,
               run_in: Runner | None = None) -> HubPush:
    """Records the push of `request.part` of the checkpoint and starts it once that is committed.

    NoSuchPart when the checkpoint lacks the part, before anything is recorded. `run_in` runs
    the push (a thread by default; tests pass one that runs it at once)."""
    exported = export_files(files, request.part)
    runner = run_in or run_in_background
    with transaction.atomic():
        push = HubPush.objects.create(run=checkpoint.run, checkpoint=checkpoint, repo_id=request.repo_id,
                                      part=request.part, private=request.private, requested_by=user,
                                      detail="waiting to start")
        token = request.token
        transaction.on_commit(lambda: runner(lambda: push_checkpoint(push.pk, exported, token)))
    return push


@sensitive_variables("token")
def push_checkpoint(push_id: int, exported: Exported, token: str) -> None:
    """The push: copy the files into a temporary folder, create the repository, upload the folder.

    Ends with the row pushed or failed, whatever happens; the folder is removed either way."""
    push = HubPush.objects.select_related("run", "checkpoint").filter(pk=push_id).first()
    if push is None:  # the run was deleted before the push began
        return
    endpoint = settings.HF_HUB_ENDPOINT
    try:
        with tempfile.TemporaryDirectory(prefix=f"push-{push_id}-", dir=staging_root()) as folder:
            copy_with_progress(push, exported, Path(folder))
            commit_url = upload(push, Path(folder), len(exported), token)
    except Exception as exc:
        reason = without_secret(failure_reason(exc, push.repo_id, endpoint), token)
        logger.warning("push %s of run %s to %s failed: %s", push.pk, push.run_id, push.repo_id, reason,
                       exc_info=not isinstance(exc, EXPLAINED))
        push.mark_failed(reason)
        return
    push.mark_pushed(commit_url, f"pushed {files_and_size(exported)} to {push.repo_id}")


def staging_root() -> Path:
    """Under the data dir rather than /tmp: a checkpoint can be gigabytes, and /tmp is often small."""
    root = Path(settings.DATA_DIR) / "hub-pushes"
    root.mkdir(parents=True, exist_ok=True)
    return root


def copy_with_progress(push: HubPush, exported: Exported, folder: Path) -> None:
    for number, item in enumerate(exported, start=1):
        push.note_progress(f"copying files {number}/{len(exported)}")
        copy_to_folder([item], folder)


@sensitive_variables("token")
def upload(push: HubPush, folder: Path, count: int, token: str) -> str:
    """Creates the repository unless it exists and uploads the folder in one commit (huggingface_hub
    splits a folder of hundreds of files into several); the URL of the last commit."""
    api = HfApi(endpoint=settings.HF_HUB_ENDPOINT, token=token)
    push.note_progress(f"creating {push.repo_id} on {settings.HF_HUB_ENDPOINT} unless it exists")
    api.create_repo(push.repo_id, private=push.private, exist_ok=True)
    push.note_progress(f"uploading {count} files to {push.repo_id}")
    commit = api.upload_folder(repo_id=push.repo_id, folder_path=folder, commit_message=commit_message(push),
                               commit_description=commit_description(push))
    return commit.commit_url


def commit_message(push: HubPush) -> str:
    return f"{push.run.name} (run #{push.run_id}), step {push.checkpoint.step}: {push.part}"


def commit_description(push: HubPush) -> str:
    return (f"Pushed from the GRPO control plane: the {push.part} part of run #{push.run_id} {push.run.name!r} "
            f"at step {push.checkpoint.step} (model version {push.checkpoint.model_version}).")


def files_and_size(exported: Exported) -> str:
    size = filesizeformat(sum(stored.size for _, stored in exported)).replace("\xa0", " ")
    return f"{len(exported)} files ({size})"

