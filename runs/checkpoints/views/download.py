"""`GET /api/runs/<id>/checkpoints/<checkpoint id>/download/`: a checkpoint folder as a tar stream.

Asked by a user (token or session): any checkpoint of a run they may see. Asked with a run's own
bearer token and `?for_run=<that run>`: only the checkpoint that run starts from, for its worker.
Served from the artifact store, or from the run's own folder under RUNS_DIR, never from elsewhere;
streamed with bounded memory and HTTP Range (runs/web/file_responses.py). `?file=<path>` gives
one file, from a bucket as a redirect to a presigned URL where ARTIFACT_PRESIGNED_URL_S is set.
Details: docs/capabilities/checkpoints.md#downloads-of-any-size.
"""
from pathlib import PurePosixPath
from typing import cast

from django.conf import settings
from django.contrib.auth.models import AnonymousUser
from django.http import Http404, HttpResponseRedirect
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.authentication import BaseAuthentication
from rest_framework.exceptions import AuthenticationFailed
from rest_framework.permissions import BasePermission
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from runs.accounts.run_tokens import run_of_token
from runs.artifacts.export import PARTS, Exported, NoSuchPart, export_files
from runs.artifacts.pieces import of_file
from runs.checkpoints.readable import folder_name, manifest_members
from runs.artifacts.stores import StoreUnavailable, artifact_store
from runs.checkpoints.models.checkpoint import Checkpoint
from runs.checkpoints.responses import checkpoint_tar, files_or_404, store_unavailable
from runs.checkpoints.starting import starts_from
from runs.training_runs.models import Run
from runs.web.file_responses import RANGE_PARAMETERS, layout_etag, pieces_response, range_responses
from runs.web.record_ids import whole_number


class StartingRunToken(BaseAuthentication):
    """`Authorization: Bearer <run token>` with `?for_run=<run id>`: the worker of that run, which may
    download the checkpoint its run starts from and nothing else (CheckpointDownloadView.get)."""

    def authenticate(self, request):
        for_run = request.query_params.get("for_run")
        if for_run is None or not request.META.get("HTTP_AUTHORIZATION", "").lower().startswith("bearer "):
            return None
        run_id = whole_number(for_run)
        if run_id is None:
            raise AuthenticationFailed(f"for_run must be a run id, not {for_run[:40]!r}")
        run = run_of_token(request, run_id)
        if run is None:
            raise AuthenticationFailed(f"this token is not valid for run {for_run}")
        return AnonymousUser(), run

    def authenticate_header(self, request):
        return 'Bearer realm="run-ingest"'


class StartingRunTokenScheme(OpenApiAuthenticationExtension):
    target_class = StartingRunToken
    name = "startingRunToken"

    def get_security_definition(self, auto_schema):
        return {"type": "http", "scheme": "bearer", "description": (
            "A run's own token, with ?for_run=<that run's id>: only the checkpoint that run starts from "
            "(its config's init_checkpoint).")}


class UserOrStartingRun(BasePermission):
    def has_permission(self, request, view):
        return bool(request.user and request.user.is_authenticated) or isinstance(request.auth, Run)


def checkpoint_for(request, run_id: int, checkpoint_id: int) -> Checkpoint:
    """The checkpoint the request may download; Http404 otherwise, saying nothing of others'."""
    if isinstance(request.auth, Run):  # a worker, for the run it starts
        checkpoint = Checkpoint.objects.filter(pk=checkpoint_id, run_id=run_id).select_related("run").first()
        if checkpoint is None or not starts_from(request.auth, checkpoint):
            raise Http404("no such checkpoint")
        return checkpoint
    run = Run.objects.visible_to(request.user).filter(pk=run_id).first()
    checkpoint = run.checkpoints.filter(pk=checkpoint_id).first() if run else None
    if checkpoint is None:
        raise Http404("no such checkpoint")
    return checkpoint


class CheckpointDownloadView(APIView):
    # api_settings gives the classes its import strings name; DRF's stubs type them as the strings.
    authentication_classes = [StartingRunToken, *cast(list[type[BaseAuthentication]],
                                                      api_settings.DEFAULT_AUTHENTICATION_CLASSES)]
    permission_classes = [UserOrStartingRun]

    @extend_schema(
        parameters=[OpenApiParameter("part", str, enum=list(PARTS), required=False, description=(
            "all (default): the whole checkpoint, to resume from; model: a ready-to-serve model (weights, "
            "tokenizer, config; a LoRA run's merged model, in its last checkpoint); adapter: a LoRA adapter "
            "with its tokenizer.")),
            OpenApiParameter("file", str, required=False, description=(
                "One file of the checkpoint (or of the part), by its path inside the folder as the tar lists "
                "it: that file alone, with Range. From a bucket, when ARTIFACT_PRESIGNED_URL_S is set, a 302 "
                "to a URL of the bucket presigned for that many seconds.")),
            OpenApiParameter("for_run", int, required=False, description=(
                "With a run's bearer token: that run's id; the checkpoint must be the one it starts from "
                "(init_checkpoint). The tar then holds the manifest its files were checked against on upload.")),
            *RANGE_PARAMETERS],
        responses={**range_responses("application/x-tar",
                                     "The checkpoint, or the part asked for, as an uncompressed tar"),
                   **range_responses("application/octet-stream", "With file: that file"),
                   302: OpenApiResponse(description=(
                       "With file, from a bucket where ARTIFACT_PRESIGNED_URL_S is set: Location is a presigned "
                       "URL of the file.")),
                   400: OpenApiResponse(description="An unknown part."),
                   401: OpenApiResponse(description="No credentials, or a run token not valid for `for_run`."),
                   404: OpenApiResponse(description="No such checkpoint, part or file, or its files are not here."),
                   503: OpenApiResponse(description="The artifact store (a bucket) could not be reached.")})
    def get(self, request, run_id: int, checkpoint_id: int):
        part = request.query_params.get("part", "all")
        if part not in PARTS:
            return Response({"detail": f"part must be all, model or adapter, not {part!r}"},
                            status=status.HTTP_400_BAD_REQUEST)
        checkpoint = checkpoint_for(request, run_id, checkpoint_id)
        try:
            exported = export_files(files_or_404(checkpoint), part)
        except NoSuchPart as exc:
            raise Http404(str(exc)) from None
        except StoreUnavailable as exc:
            return store_unavailable(exc)
        if (wanted := request.query_params.get("file")) is not None:
            return one_file(request, checkpoint, exported, wanted)
        name = folder_name(checkpoint) if part == "all" else f"{folder_name(checkpoint)}-{part}"
        manifest = manifest_members(checkpoint) if isinstance(request.auth, Run) and part == "all" else []
        return checkpoint_tar(request, exported, name, manifest, filename=f"run-{run_id}-{name}.tar")


def one_file(request, checkpoint: Checkpoint, exported: Exported, wanted: str):
    """One file of the export (`?file=`): a redirect to the bucket where it is kept and presigned
    links are allowed (the bytes then never pass here), else streamed with Range like the tar."""
    found = next((stored for path, stored in exported if path.as_posix() == wanted), None)
    if found is None:
        raise Http404(f"no file {wanted!r} in this checkpoint's download: the tar lists its files")
    presign = getattr(artifact_store(), "presigned_url", None) if checkpoint.in_store else None
    if presign is not None and settings.ARTIFACT_PRESIGNED_URL_S:
        try:
            url = presign(checkpoint.run_id, checkpoint.step, found.path, settings.ARTIFACT_PRESIGNED_URL_S)
        except StoreUnavailable as exc:
            return store_unavailable(exc)
        return HttpResponseRedirect(url)
    piece = of_file(found)
    return pieces_response(request, [piece], etag=layout_etag([piece]), last_modified=found.mtime,
                           content_type="application/octet-stream", filename=PurePosixPath(wanted).name)

