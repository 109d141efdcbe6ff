"""What the checkpoint views answer in common: a checkpoint's files or a 404 saying why they
cannot be read here, a 503 while the artifact store is away, and a checkpoint as a tar stream
that takes HTTP Range (runs/web/file_responses.py)."""
from django.http import Http404
from rest_framework import status
from rest_framework.response import Response

from runs.checkpoints import readable as readable_checkpoints
from runs.artifacts.checkpoint_files import CheckpointFile
from runs.artifacts.export import Exported, tar_pieces
from runs.checkpoints.readable import CheckpointUnreadable
from runs.artifacts.stores import StoreUnavailable
from runs.checkpoints.models.checkpoint import Checkpoint
from runs.web.file_responses import layout_etag, pieces_response


def files_or_404(checkpoint: Checkpoint) -> list[CheckpointFile]:
    """The checkpoint's files wherever this control plane reads them; Http404 saying why not."""
    try:
        return readable_checkpoints.files_of(checkpoint)
    except CheckpointUnreadable as exc:
        raise Http404(str(exc)) from None


def stored_files_or_404(run_id: int, step: int) -> list[CheckpointFile]:
    """An uploaded checkpoint's files in the artifact store; Http404 when they are gone."""
    try:
        return readable_checkpoints.stored_files(run_id, step)
    except CheckpointUnreadable as exc:
        raise Http404(str(exc)) from None


def store_unavailable(exc: StoreUnavailable) -> Response:
    return Response({"detail": f"the artifact store is unavailable; try again later ({exc})"},
                    status=status.HTTP_503_SERVICE_UNAVAILABLE)


def checkpoint_tar(request, exported: Exported, name: str, before: list[bytes], filename: str):
    """The tar of `exported` under a folder `name`, after the members `before`: streamed, with Range."""
    pieces = tar_pieces(exported, name, before=before)
    return pieces_response(request, pieces, etag=layout_etag(pieces), content_type="application/x-tar",
                           last_modified=max((file.mtime for _, file in exported), default=None), filename=filename)
