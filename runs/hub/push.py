"""Pushing a checkpoint to the Hugging Face Hub with a token the user gives for that push.

The request records the push (a HubPush row, which pages and scripts poll) and answers at once;
the push itself is a task of the control plane's background queue (runs/hub/tasks.py),
never of a run's worker. The token is never stored or logged: it travels sealed in the task's
message (runs/background/sealed.py) and stops opening after TOKEN_MAX_AGE_S.
Details: docs/capabilities/checkpoints.md#pushing-to-the-hugging-face-hub.
"""
import logging
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings
from django.template.defaultfilters import filesizeformat
from django.views.decorators.debug import sensitive_variables
from huggingface_hub import CommitOperationAdd, HfApi

from runs.artifacts.checkpoint_files import CheckpointFile
from runs.artifacts.export import Exported, export_files
from runs.checkpoints.readable import CheckpointUnreadable
from runs.background.limits import HUB_PUSHES, place_for
from runs.background.sealed import Unsealable, seal, unseal
from runs.background.tasks import enqueue
from runs.checkpoints.models.checkpoint import Checkpoint
from runs.hub.failures import EXPLAINED, failure_reason, without_secret
from runs.hub.models import HubPush, HubPushStatus

logger = logging.getLogger(__name__)

PUSH_TASK = "push_checkpoint"
TOKEN_PURPOSE = "hub-push-token"
# How long a push may wait in the queue before its token no longer opens: generous for a queue
# behind other pushes, short enough that a copy of the broker's messages is soon worth nothing.
TOKEN_MAX_AGE_S = 24 * 3600
COPY_CHUNK = 1024 * 1024


@dataclass(frozen=True)
class PushRequest:
    repo_id: str
    token: str = field(repr=False)
    part: str = "model"
    private: bool = True


@sensitive_variables("request", "sealed_token")
def start_push(checkpoint: Checkpoint, files: list[CheckpointFile], request: PushRequest, user) -> HubPush:
    """Records the push of `request.part` of the checkpoint and queues it once that is committed.

    NoSuchPart when the checkpoint lacks the part, UnfinishedLimitReached when the user has as many
    pushes under way as they may (runs/background/limits.py), before anything is recorded."""
    exported = export_files(files, request.part)
    sealed_token = seal(request.token, TOKEN_PURPOSE)
    with place_for(HUB_PUSHES, user):  # UnfinishedLimitReached when the user's places are taken
        push = HubPush.objects.create(
            run=checkpoint.run, checkpoint=checkpoint, repo_id=request.repo_id, part=request.part,
            private=request.private, requested_by=user, detail="waiting for the control plane's queue",
            files_total=len(exported), bytes_total=sum(stored.size for _, stored in exported))
        enqueue(PUSH_TASK, push.pk, sealed_token)
    return push


@sensitive_variables("sealed_token", "token")
def push_checkpoint(push_id: int, sealed_token: str, files_of) -> None:
    """The push: create the repository, upload the part's files one by one, commit them together.

    Ends with the row pushed or failed, whatever happens. A push already ended (a message delivered
    twice) or deleted with its run is left alone. `files_of(checkpoint)` lists the checkpoint's files
    where this control plane reads them (CheckpointUnreadable saying why when they are gone)."""
    push = HubPush.objects.select_related("run", "checkpoint").filter(pk=push_id).first()
    if push is None or push.status != HubPushStatus.PUSHING:
        return
    endpoint, token = settings.HF_HUB_ENDPOINT, ""
    try:
        token = unseal(sealed_token, TOKEN_PURPOSE, TOKEN_MAX_AGE_S)
        exported = export_files(files_of(push.checkpoint), push.part)
        commit_url = upload(push, exported, token)
    except Unsealable as exc:
        push.mark_failed(f"the token given for this push could not be read: {exc}; push again")
        return
    except CheckpointUnreadable as exc:
        push.mark_failed(f"the checkpoint cannot be read here any more: {exc}")
        return
    except Exception as exc:
        reason = without_secret(failure_reason(exc, push.repo_id, endpoint), token)
        logger.warning("push %s of run %s to %s failed: %s", push.pk, push.run_id, push.repo_id, reason,
                       exc_info=not isinstance(exc, EXPLAINED))
        push.mark_failed(reason)
        return
    push.mark_pushed(commit_url, f"pushed {files_and_size(exported)} to {push.repo_id}")


def staging_root() -> Path:
    """Under the data dir rather than /tmp: a file of a checkpoint can be gigabytes, and /tmp is often small."""
    root = Path(settings.DATA_DIR) / "hub-pushes"
    root.mkdir(parents=True, exist_ok=True)
    return root


@sensitive_variables("token")
def upload(push: HubPush, exported: Exported, token: str) -> str:
    """Creates the repository unless it exists, sends each file (huggingface_hub's pre-upload: a big
    file goes to the Hub's storage then and is not held anywhere after), then makes one commit of
    them all. The URL of the commit."""
    api = HfApi(endpoint=settings.HF_HUB_ENDPOINT, token=token)
    push.note_progress(f"creating {push.repo_id} on {settings.HF_HUB_ENDPOINT} unless it exists")
    api.create_repo(push.repo_id, private=push.private, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f"push-{push.pk}-", dir=staging_root()) as spool:
        operations, bytes_done = [], 0
        for number, (path, stored) in enumerate(exported, start=1):
            operation, spooled = addition(path, stored, Path(spool) / str(number))
            api.preupload_lfs_files(push.repo_id, additions=[operation])
            if spooled and getattr(operation, "_is_uploaded", False):
                spooled.unlink()  # on the Hub's side now; the commit names it by its hash
            operations.append(operation)
            bytes_done += stored.size
            push.note_sent(number, bytes_done, f"sent {number}/{len(exported)} files to {push.repo_id}")
        push.note_progress(f"committing {len(exported)} files to {push.repo_id}")
        commit = api.create_commit(repo_id=push.repo_id, operations=operations, commit_message=commit_message(push),
                                   commit_description=commit_description(push))
    return commit.commit_url


def addition(path, stored: CheckpointFile, spool_path: Path) -> tuple[CommitOperationAdd, Path | None]:
    """The Hub operation adding `stored` at `path`: read in place when it is a file on this disk, else
    copied to `spool_path` first (returned, so it can go as soon as it is sent)."""
    if local := local_path(stored):
        return CommitOperationAdd(path_in_repo=path.as_posix(), path_or_fileobj=str(local)), None
    with stored.open() as source, spool_path.open("wb") as out:
        while block := source.read(COPY_CHUNK):
            out.write(block)
    return CommitOperationAdd(path_in_repo=path.as_posix(), path_or_fileobj=str(spool_path)), spool_path


def local_path(stored: CheckpointFile) -> Path | None:
    """The file's path on this disk when `stored.open()` opens a file here (a checkpoint folder, the
    filesystem store), checked to be that very file; None for a bucket's stream."""
    with stored.open() as handle:
        name = getattr(handle, "name", None)
        if not isinstance(name, str) or not Path(name).is_absolute():
            return None
        try:
            opened, named = os.fstat(handle.fileno()), os.stat(name)
        except (OSError, ValueError):  # no descriptor (io.UnsupportedOperation is both), or gone
            return None
    return Path(name) if (opened.st_dev, opened.st_ino) == (named.st_dev, named.st_ino) else None


def commit_message(push: HubPush) -> str:
    return f"{push.run.name} (run #{push.run_id}), step {push.checkpoint.step}: {push.part}"


def commit_description(push: HubPush) -> str:
    return (f"Pushed from the GRPO control plane: the {push.part} part of run #{push.run_id} {push.run.name!r} "
            f"at step {push.checkpoint.step} (model version {push.checkpoint.model_version}).")


def files_and_size(exported: Exported) -> str:
    size = filesizeformat(sum(stored.size for _, stored in exported)).replace("\xa0", " ")
    return f"{len(exported)} files ({size})"
