"""`GET /api/runs/<id>/checkpoints/<checkpoint id>/download/`: a checkpoint folder as a tar stream.

Checkpoints are folders (model, tokenizer, trainer state). One a worker uploaded is served from
the artifact store (runs/artifacts/stores.py: this disk or a bucket). Otherwise it is where the
trainer wrote it, under RUNS_DIR/<run id>/: only folders inside that run's own directory here
are served: a checkpoint whose worker ran elsewhere, or a reported path outside the run's
folder, is a 404 that says so, never a file from somewhere else.
"""
from pathlib import Path

from django.conf import settings
from django.http import Http404, StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from runs.artifacts import checkpoint_store as store
from runs.artifacts.checkpoint_files import CheckpointFile, folder_files
from runs.artifacts.export import PARTS, NoSuchPart, export_files, tar_stream
from runs.artifacts.stores import StoreUnavailable, step_folder
from runs.models import Checkpoint, Run


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


def stored_files(run_id: int, step: int) -> list[CheckpointFile]:
    """An uploaded checkpoint's files in the artifact store; Http404 when they are gone."""
    if not (files := store.checkpoint_files(run_id, step)):
        raise Http404("this checkpoint's files are no longer in the control plane's store")
    return files


def files_of(checkpoint: Checkpoint) -> list[CheckpointFile]:
    """The checkpoint's files wherever this control plane can read them; Http404 saying why not."""
    if checkpoint.in_store:
        return stored_files(checkpoint.run_id, checkpoint.step)
    return folder_files(checkpoint_folder(checkpoint.run, checkpoint.path))


def folder_name(checkpoint: Checkpoint) -> str:
    return step_folder(checkpoint.step) if checkpoint.in_store else Path(checkpoint.path).name


def store_unavailable(exc: StoreUnavailable) -> Response:
    return Response({"detail": f"the artifact store is unavailable; try again later ({exc})"},
                    status=status.HTTP_503_SERVICE_UNAVAILABLE)


class CheckpointDownloadView(APIView):
    @extend_schema(
        parameters=[OpenApiParameter("part", str, enum=list(PARTS), required=False, description=(
            "all (default): the whole checkpoint, to resume from; model: a ready-to-serve model (weights, "
            "tokenizer, config; a LoRA run's merged model, in its last checkpoint); adapter: a LoRA adapter "
            "with its tokenizer."))],
        responses={(200, "application/x-tar"): OpenApiResponse(OpenApiTypes.BINARY, description=(
            "The checkpoint, or the part asked for, as an uncompressed tar.")),
                   400: OpenApiResponse(description="An unknown part."),
                   404: OpenApiResponse(description="No such checkpoint or part, or its files are not here."),
                   503: OpenApiResponse(description="The artifact store (a bucket) could not be reached.")})
    def get(self, request, run_id: int, checkpoint_id: int):
        part = request.query_params.get("part", "all")
        if part not in PARTS:
            return Response({"detail": f"part must be all, model or adapter, not {part!r}"},
                            status=status.HTTP_400_BAD_REQUEST)
        run = Run.objects.visible_to(request.user).filter(pk=run_id).first()
        checkpoint = run.checkpoints.filter(pk=checkpoint_id).first() if run else None
        if checkpoint is None:
            raise Http404("no such checkpoint")
        try:
            exported = export_files(files_of(checkpoint), part)
        except NoSuchPart as exc:
            raise Http404(str(exc)) from None
        except StoreUnavailable as exc:
            return store_unavailable(exc)
        name = folder_name(checkpoint) if part == "all" else f"{folder_name(checkpoint)}-{part}"
        response = StreamingHttpResponse(tar_stream(exported, name), content_type="application/x-tar")
        response["Content-Disposition"] = f'attachment; filename="run-{run.pk}-{name}.tar"'
        return response
