"""`GET /api/runs/<id>/checkpoints/<checkpoint id>/download/`: a checkpoint folder as a tar stream.

Checkpoints are folders (model, tokenizer, trainer state). One a worker uploaded is served from
the control plane's store (runs/artifacts/checkpoint_store.py). Otherwise it is where the trainer
wrote it, under RUNS_DIR/<run id>/: only folders inside that run's own directory here are served:
a checkpoint whose worker ran elsewhere, or a reported path outside the run's folder, is a 404
that says so, never a file from somewhere else. The tar is produced while it is sent, so a
checkpoint of hundreds of MB costs no memory or temporary disk.
"""
import tarfile
from pathlib import Path

from django.conf import settings
from django.http import Http404, StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.views import APIView

from runs.artifacts import checkpoint_store as store
from runs.models import Run

CHUNK = 1024 * 1024
BLOCK = tarfile.BLOCKSIZE


def checkpoint_folder(run: Run, reported_path: str) -> Path:
    """The checkpoint's folder if it lies inside this run's directory here and exists; else Http404."""
    run_dir = (Path(settings.RUNS_DIR) / str(run.pk)).resolve()
    folder = Path(reported_path).resolve()
    if not folder.is_relative_to(run_dir):
        raise Http404("this checkpoint was written outside this control plane's run directory "
                      "(on a worker on another machine?); fetch it from there")
    if not folder.is_dir():
        raise Http404("this checkpoint's files are no longer on disk (pruned by save_total_limit, or removed)")
    return folder


def stored_folder(checkpoint) -> Path:
    """An uploaded checkpoint's folder in the control plane's store; Http404 when it is gone."""
    folder = store.checkpoint_folder(checkpoint.run_id, checkpoint.step)
    if not folder.is_dir():
        raise Http404("this checkpoint's files are no longer in the control plane's store")
    return folder


def tar_stream(folder: Path):
    """Yields an uncompressed tar of `folder` (named after it), one chunk at a time."""
    for path in sorted(folder.rglob("*")):
        if path.is_symlink() or not (path.is_file() or path.is_dir()):
            continue  # links could point outside the run's folder
        info = tarfile.TarInfo(f"{folder.name}/{path.relative_to(folder).as_posix()}")
        stat = path.stat()
        info.mtime, info.mode = int(stat.st_mtime), 0o644
        if path.is_dir():
            info.type, info.mode = tarfile.DIRTYPE, 0o755
            yield info.tobuf(format=tarfile.PAX_FORMAT)
            continue
        info.size = stat.st_size
        yield info.tobuf(format=tarfile.PAX_FORMAT)
        yield from _file_chunks(path, info.size)
    yield b"\0" * (2 * BLOCK)  # end of archive


def _file_chunks(path: Path, size: int):
    sent = 0
    with path.open("rb") as handle:
        while sent < size and (chunk := handle.read(min(CHUNK, size - sent))):
            sent += len(chunk)
            yield chunk
    if sent < size:  # the file shrank while being sent: pad so the archive stays readable
        yield b"\0" * (size - sent)
    if size % BLOCK:
        yield b"\0" * (BLOCK - size % BLOCK)


class CheckpointDownloadView(APIView):
    @extend_schema(responses={(200, "application/x-tar"): OpenApiResponse(OpenApiTypes.BINARY, description=(
        "The checkpoint folder as an uncompressed tar. 404 when its files are not on this machine."))})
    def get(self, request, run_id: int, checkpoint_id: int):
        run = Run.objects.visible_to(request.user).filter(pk=run_id).first()
        checkpoint = run.checkpoints.filter(pk=checkpoint_id).first() if run else None
        if checkpoint is None:
            raise Http404("no such checkpoint")
        folder = stored_folder(checkpoint) if checkpoint.in_store else checkpoint_folder(run, checkpoint.path)
        response = StreamingHttpResponse(tar_stream(folder), content_type="application/x-tar")
        response["Content-Disposition"] = f'attachment; filename="run-{run.pk}-{folder.name}.tar"'
        return response
