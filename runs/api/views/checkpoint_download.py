"""`GET /api/runs/<id>/checkpoints/<checkpoint id>/download/`: a checkpoint folder as a tar stream.

Asked by a user (token or session): any checkpoint of a run they may see. Asked with a run's own
bearer token and `?for_run=<that run>`: the one checkpoint that run starts from (its config's
init_checkpoint), for its worker, with the manifest beside it as a resume's archive has it; any
other checkpoint is a 404, as for one that does not exist.

Checkpoints are folders (model, tokenizer, trainer state). One a worker uploaded is served from
the artifact store (runs/artifacts/stores.py: this disk or a bucket). Otherwise it is where the
trainer wrote it, under RUNS_DIR/<run id>/: only folders inside that run's own directory here
are served: a checkpoint whose worker ran elsewhere, or a reported path outside the run's
folder, is a 404 that says so, never a file from somewhere else.

The tar streams with bounded memory and takes HTTP Range (runs/api/file_responses.py), so an
interrupted download of a checkpoint of tens of GB goes on where it stopped (`curl -C -`); from a
bucket, the files are read with ranged GETs through the control plane, which authorises first.
`?file=<path>` gives one file of it alone, also with Range; from a bucket, where
ARTIFACT_PRESIGNED_URL_S is set, as a redirect to a presigned URL of the bucket instead.
"""
from pathlib import Path, PurePosixPath

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

from runs.artifacts import checkpoint_store as store
from runs.artifacts.checkpoint_files import CheckpointFile, folder_files
from runs.api.views.ingest import run_of_token
from runs.api.file_responses import RANGE_PARAMETERS, layout_etag, pieces_response, range_responses
from runs.artifacts.export import PARTS, Exported, NoSuchPart, export_files, tar_member, tar_pieces
from runs.artifacts.pieces import of_file
from runs.artifacts.stores import StoreUnavailable, artifact_store, step_folder
from runs.models import Checkpoint, Run
from runs.record_ids import whole_number
from runs.starting_checkpoint import starts_from
from worker.trainer.checkpoints.manifest import ARCHIVE_MANIFEST, CheckpointManifest


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


def manifest_members(checkpoint: Checkpoint) -> list[bytes]:
    """The manifest the checkpoint's files were checked against on upload, as the worker's fetch
    reads it beside the folder (worker/trainer/checkpoints/fetch.py); none when not kept."""
    if not (checkpoint.in_store and checkpoint.files):
        return []
    kept = CheckpointManifest(step=checkpoint.step, model_version=checkpoint.model_version,
                              local_path=checkpoint.path or "?", files=checkpoint.files)
    return [tar_member(ARCHIVE_MANIFEST, kept.model_dump_json().encode())]


class CheckpointDownloadView(APIView):
    authentication_classes = [StartingRunToken, *api_settings.DEFAULT_AUTHENTICATION_CLASSES]
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
            exported = export_files(files_of(checkpoint), part)
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


def checkpoint_tar(request, exported: Exported, name: str, before: list[bytes], filename: str):
    """The tar of `exported` under a folder `name`, after the members `before`: streamed, with Range."""
    pieces = tar_pieces(exported, name, before=before)
    return pieces_response(request, pieces, etag=layout_etag(pieces), content_type="application/x-tar",
                           last_modified=max((file.mtime for _, file in exported), default=None), filename=filename)
