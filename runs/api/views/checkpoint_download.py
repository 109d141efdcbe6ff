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
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.response import Response
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


# What `part` takes from a checkpoint folder (None: all of it): the files a served model needs.
TRAINER_STATE, MERGED = "trainer_state.pt", "merged"
ADAPTER_FILES = ("adapter_model.safetensors", "adapter_config.json")


def export_folder(folder: Path, part: str) -> tuple[Path, object]:
    """The folder to archive for `part` and which of its paths to leave out: `all`; `model`, ready
    to serve (no optimizer state; a LoRA checkpoint's merged model); `adapter`, a LoRA adapter
    with its tokenizer. Http404 saying why when the checkpoint has no such part."""
    is_lora = (folder / ADAPTER_FILES[0]).is_file()
    if part == "all":
        return folder, None
    if part == "adapter":
        if not is_lora:
            raise Http404("this checkpoint holds a whole model, not a LoRA adapter: take part=model")
        return folder, lambda relative: relative.parts[0] in (TRAINER_STATE, MERGED)
    if is_lora:
        if not (folder / MERGED).is_dir():
            raise Http404("this LoRA checkpoint holds the adapter alone (the run's last checkpoint also holds "
                          "the merged model): take part=adapter, or the last checkpoint")
        return folder / MERGED, None
    return folder, lambda relative: relative.parts[0] == TRAINER_STATE


def tar_stream(folder: Path, leave_out=None, name: str | None = None):
    """Yields an uncompressed tar of `folder` (named `name`, by default after it), one chunk at a
    time, without the paths for which `leave_out(relative path)` is true."""
    for path in sorted(folder.rglob("*")):
        if path.is_symlink() or not (path.is_file() or path.is_dir()):
            continue  # links could point outside the run's folder
        if leave_out is not None and leave_out(path.relative_to(folder)):
            continue
        info = tarfile.TarInfo(f"{name or folder.name}/{path.relative_to(folder).as_posix()}")
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
    @extend_schema(
        parameters=[OpenApiParameter("part", str, enum=["all", "model", "adapter"], required=False, description=(
            "all (default): the whole checkpoint, to resume from; model: a ready-to-serve model (weights, "
            "tokenizer, config; a LoRA run's merged model, in its last checkpoint); adapter: a LoRA adapter "
            "with its tokenizer."))],
        responses={(200, "application/x-tar"): OpenApiResponse(OpenApiTypes.BINARY, description=(
            "The checkpoint, or the part asked for, as an uncompressed tar.")),
                   400: OpenApiResponse(description="An unknown part."),
                   404: OpenApiResponse(description="No such checkpoint or part, or its files are not here.")})
    def get(self, request, run_id: int, checkpoint_id: int):
        part = request.query_params.get("part", "all")
        if part not in ("all", "model", "adapter"):
            return Response({"detail": f"part must be all, model or adapter, not {part!r}"},
                            status=status.HTTP_400_BAD_REQUEST)
        run = Run.objects.visible_to(request.user).filter(pk=run_id).first()
        checkpoint = run.checkpoints.filter(pk=checkpoint_id).first() if run else None
        if checkpoint is None:
            raise Http404("no such checkpoint")
        folder = stored_folder(checkpoint) if checkpoint.in_store else checkpoint_folder(run, checkpoint.path)
        exported, leave_out = export_folder(folder, part)
        name = folder.name if part == "all" else f"{folder.name}-{part}"
        response = StreamingHttpResponse(tar_stream(exported, leave_out, name), content_type="application/x-tar")
        response["Content-Disposition"] = f'attachment; filename="run-{run.pk}-{name}.tar"'
        return response
