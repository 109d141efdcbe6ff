"""A worker uploads a checkpoint with the run's token: declares its files, sends each in chunks,
then completes with the manifest, and polls until the control plane has finished it.

Routes under `/api/runs/<id>/uploads/<step>/`: `begin`, `files/<path>` (GET: bytes arrived; PUT:
a chunk at `Upload-Offset`, checked against `Upload-Chunk-Sha256` as it arrives), `complete`
(202 at once; a background task, runs/checkpoints/finishing.py, checks and stores the files), the
upload's state, and `archive` (a listed checkpoint for a worker that resumes). A full disk is a
507, a bucket away a 503, a chunk past the run's quota a 507 before it is written; what arrived
stays. Details: docs/capabilities/checkpoints.md#the-upload-route-by-route.
"""
import errno

from django.db.models import Sum
from django.http import Http404
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, inline_serializer
from pydantic import ValidationError as SchemaError
from rest_framework import serializers, status
from rest_framework.exceptions import ParseError
from rest_framework.response import Response
from rest_framework.views import APIView

from runs.accounts.run_tokens import run_for_token
from runs.artifacts import checkpoint_store as store
from runs.checkpoints.readable import manifest_members
from runs.artifacts.stores import StoreUnavailable, step_folder
from runs.checkpoints.finishing import ManifestRefused, announce_listed, complete_upload
from runs.checkpoints.models.upload import CheckpointUpload, UploadBusy, UploadState
from runs.checkpoints.responses import checkpoint_tar, store_unavailable, stored_files_or_404
from runs.web.file_responses import RANGE_PARAMETERS, range_responses
from runs.web.json_bodies import BoundedJSONParser
from runs.web.strict_bodies import pydantic_body, schema_problems
from worker.trainer.checkpoints.manifest import ARCHIVE_MANIFEST, CheckpointManifest, DeclaredFile, UploadDeclaration

CHUNK = 1024 * 1024
RECEIVED = inline_serializer("UploadReceived", {"received": serializers.IntegerField()})
DETAIL = inline_serializer("UploadProblem", {"detail": serializers.CharField()})
STATE = inline_serializer("CheckpointUploadState", {
    "step": serializers.IntegerField(), "state": serializers.ChoiceField(UploadState.choices),
    "round": serializers.IntegerField(help_text="How many completes started a finish."),
    "send_again": serializers.ListField(child=serializers.CharField(),
                                        help_text="When failed: the files to send again, whole."),
    "detail": serializers.CharField(help_text="Progress while finishing; what went wrong when failed."),
    "checkpoint": inline_serializer("UploadedCheckpoint", {"id": serializers.IntegerField(),
                                                           "size_bytes": serializers.IntegerField()},
                                    allow_null=True)})
CHUNK_REFUSED = inline_serializer("ChunkRefused", {"detail": serializers.CharField(),
                                                   "received": serializers.IntegerField(),
                                                   "send_again": serializers.ListField()})


def _disk_full_or_raise(exc: OSError) -> Response:
    if exc.errno != errno.ENOSPC:
        raise exc
    return Response({"detail": "the control plane's disk is full: the upload waits, the worker keeps its copy"},
                    status=status.HTTP_507_INSUFFICIENT_STORAGE)


def _relative_or_400(path: str):
    try:
        return store.safe_relative_path(path), None
    except ValueError as exc:
        return None, Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)


def checkpoint_bytes_held(run) -> int:
    """What counts against RUN_CHECKPOINT_QUOTA_GB: the run's listed checkpoints and its uploads."""
    listed = run.checkpoints.filter(in_store=True).aggregate(total=Sum("size_bytes"))["total"] or 0
    return listed + store.uploading_bytes(run.pk)


def state_of(upload: CheckpointUpload, http_status: int | None = None) -> Response:
    """The upload's state; 200 once done (or failed), 202 while it is still to be finished."""
    checkpoint = None
    if upload.state == UploadState.DONE:
        listed = upload.run.checkpoints.filter(step=upload.step, in_store=True).first()
        checkpoint = listed and {"id": listed.pk, "size_bytes": listed.size_bytes}
    body = {"step": upload.step, "state": upload.state, "round": upload.round, "send_again": upload.send_again,
            "detail": upload.detail, "checkpoint": checkpoint}
    default = status.HTTP_202_ACCEPTED if upload.state == UploadState.FINISHING else status.HTTP_200_OK
    return Response(body, status=http_status or default)


def _upload_or_400(run, step: int):
    upload = CheckpointUpload.objects.filter(run=run, step=step).first()
    if upload is None:
        return None, Response({"detail": f"no upload of step {step} was begun: declare its files first "
                                         f"(POST .../uploads/{step}/begin)"}, status=status.HTTP_400_BAD_REQUEST)
    return upload, None


def _parsed_or_400(schema, request, what: str):
    """The request's JSON body as `schema`, or a 400 naming what was wrong with the `what`."""
    try:
        return schema.model_validate(request.data), None
    except ParseError as exc:
        return None, Response({"detail": f"the body is not JSON: {exc.detail}"}, status=status.HTTP_400_BAD_REQUEST)
    except SchemaError as exc:
        return None, Response({"detail": f"the {what} was refused", "errors": schema_problems(exc)},
                              status=status.HTTP_400_BAD_REQUEST)


def _declared_length(request) -> int:
    length = request.META.get("CONTENT_LENGTH") or ""
    return int(length) if length.isdigit() else 0


class _RunTokenView(APIView):
    authentication_classes = []
    permission_classes = []

    def get_authenticate_header(self, request):
        return 'Bearer realm="run-ingest"'


class CheckpointFileUploadView(_RunTokenView):
    parser_classes = []  # the body is the file's bytes, read as a stream

    @extend_schema(summary="Bytes of an uploading checkpoint file received so far",
                   responses={200: RECEIVED, 400: DETAIL, 401: DETAIL, 404: DETAIL})
    def get(self, request, run_id: int, step: int, path: str):
        run = run_for_token(request, run_id)
        relative, refused = _relative_or_400(path)
        return refused or Response({"received": store.received_bytes(run.pk, step, relative)})

    @extend_schema(summary="A chunk of a checkpoint file", request={"application/octet-stream": bytes},
                   parameters=[OpenApiParameter("Upload-Offset", int, OpenApiParameter.HEADER, required=True,
                                                description="Where in the file this chunk starts."),
                               OpenApiParameter("Upload-Chunk-Sha256", str, OpenApiParameter.HEADER,
                                                description="The chunk's sha256 (hex): checked as it arrives.")],
                   responses={200: RECEIVED,
                              400: OpenApiResponse(DETAIL, description="No upload of this step was begun, or "
                                                                       "the file is not among those it declared."),
                              401: DETAIL, 404: DETAIL,
                              409: OpenApiResponse(RECEIVED, description="Send from `received` instead (or the "
                                                                         "upload is finishing: its `state`)."),
                              422: OpenApiResponse(CHUNK_REFUSED, description="The chunk arrived otherwise than "
                                                                              "its sha256, or runs past the "
                                                                              "file's declared size: not kept."),
                              413: OpenApiResponse(DETAIL, description="The chunk is larger than "
                                                                       "CHECKPOINT_CHUNK_MAX_MB."),
                              507: OpenApiResponse(DETAIL, description="The control plane's disk is full, or the "
                                                                       "run's checkpoints would pass their quota "
                                                                       "(RUN_CHECKPOINT_QUOTA_GB): nothing of the "
                                                                       "chunk was written.")})
    def put(self, request, run_id: int, step: int, path: str):
        run = run_for_token(request, run_id)
        relative, refused = _relative_or_400(path)
        if refused:
            return refused
        offset = request.headers.get("Upload-Offset", "")
        if not offset.isdigit():
            return Response({"detail": "send the chunk's place in the file as the Upload-Offset header"},
                            status=status.HTTP_400_BAD_REQUEST)
        upload, refused = _upload_or_400(run, step)
        if refused:
            return refused
        if upload.state in (UploadState.FINISHING, UploadState.DONE):
            return Response({"detail": f"the upload of step {step} is {upload.state}: its files are fixed "
                                       f"(begin it again for a step saved again)", "state": upload.state,
                             "received": store.received_bytes(run.pk, step, relative)},
                            status=status.HTTP_409_CONFLICT)
        if (declared := upload.declared_sizes.get(relative)) is None:
            return Response({"detail": f"{relative} is not among the files declared for the upload of step "
                                       f"{step}: it is refused"}, status=status.HTTP_400_BAD_REQUEST)
        body = iter(lambda: request.stream.read(CHUNK) if request.stream else b"", b"")
        try:
            # DRF reads exactly Content-Length bytes (none without one): that is what would be written.
            store.check_quota(checkpoint_bytes_held(run), _declared_length(request))
            received = store.append_chunk(run.pk, step, relative, int(offset), body, declared,
                                          sha256=request.headers.get("Upload-Chunk-Sha256") or None)
        except store.OffsetMismatch as exc:
            return Response({"detail": str(exc), "received": exc.received}, status=status.HTTP_409_CONFLICT)
        except store.ChunkRefused as exc:
            return Response({"detail": str(exc), "received": store.received_bytes(run.pk, step, relative),
                             "send_again": [relative]}, status=status.HTTP_422_UNPROCESSABLE_ENTITY)
        except store.QuotaExceeded as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_507_INSUFFICIENT_STORAGE)
        except OSError as exc:
            return _disk_full_or_raise(exc)
        return Response({"received": received})


class CheckpointUploadBeginView(_RunTokenView):
    parser_classes = [BoundedJSONParser]

    @extend_schema(summary="Declares the files of a checkpoint upload (before its chunks)",
                   request=pydantic_body(UploadDeclaration, {"files": serializers.ListField(
                       child=pydantic_body(DeclaredFile, {"path": serializers.CharField(),
                                                          "size": serializers.IntegerField()}))}),
                   responses={200: STATE, 400: DETAIL, 401: DETAIL, 404: DETAIL,
                              409: OpenApiResponse(DETAIL, description="The upload is being finished: ask for "
                                                                       "its state.")})
    def post(self, request, run_id: int, step: int):
        run = run_for_token(request, run_id)
        declaration, refused = _parsed_or_400(UploadDeclaration, request, "declaration")
        if refused:
            return refused
        try:
            upload = CheckpointUpload.declare(run, step, declaration.model_dump()["files"])
        except UploadBusy as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        store.keep_only_declared(run.pk, step, upload.declared_sizes)
        return state_of(upload, status.HTTP_200_OK)


class CheckpointUploadStateView(_RunTokenView):
    @extend_schema(summary="Where a checkpoint upload stands (the worker polls it after completing)",
                   responses={200: STATE, 202: OpenApiResponse(STATE, description="Still finishing."),
                              401: DETAIL, 404: DETAIL})
    def get(self, request, run_id: int, step: int):
        run = run_for_token(request, run_id)
        upload = CheckpointUpload.objects.filter(run=run, step=step).first()
        if upload is None:
            raise Http404(f"no upload of step {step}")
        if upload.state == UploadState.DONE:
            announce_listed(upload)
        return state_of(upload)


class CheckpointUploadCompleteView(_RunTokenView):
    parser_classes = [BoundedJSONParser]

    @extend_schema(
        summary="Completes an upload with its manifest: checked and listed in the background",
        request=pydantic_body(CheckpointManifest, {
            "step": serializers.IntegerField(), "model_version": serializers.IntegerField(),
            "local_path": serializers.CharField(), "files": serializers.ListField()}),
        responses={202: OpenApiResponse(STATE, description="Finishing: poll GET .../uploads/<step>/ (this "
                                                           "complete or an earlier one started it)."),
                   200: OpenApiResponse(STATE, description="Done already: the checkpoint is listed."),
                   400: OpenApiResponse(DETAIL, description="A malformed manifest, no upload begun, or files "
                                                            "the upload did not declare or the manifest does "
                                                            "not list, named."),
                   401: DETAIL, 404: DETAIL,
                   422: OpenApiResponse(inline_serializer("UploadMismatch", {
                       "detail": serializers.CharField(), "send_again": serializers.ListField()}),
                       description="Files missing or of another size than the manifest's; send them again.")})
    def post(self, request, run_id: int, step: int):
        run = run_for_token(request, run_id)
        manifest, refused = _parsed_or_400(CheckpointManifest, request, "manifest")
        if refused:
            return refused
        if manifest.step != step:
            return Response({"detail": f"the manifest is for step {manifest.step}, the URL for step {step}"},
                            status=status.HTTP_400_BAD_REQUEST)
        upload, refused = _upload_or_400(run, step)
        if refused:
            return refused
        try:
            upload, short = complete_upload(upload, manifest)
        except ManifestRefused as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        if short:
            return Response({"detail": f"{len(short)} file(s) missing or not of the manifest's size; send them "
                                       f"again", "send_again": short}, status=status.HTTP_422_UNPROCESSABLE_ENTITY)
        return state_of(upload)


class CheckpointArchiveView(_RunTokenView):
    @extend_schema(summary="An uploaded checkpoint as a tar, for the worker resuming the run",
                   parameters=RANGE_PARAMETERS,
                   responses={**range_responses("application/x-tar", (
                       f"The checkpoint folder, and beside it `{ARCHIVE_MANIFEST}`: each file's size and sha256 as "
                       "checked on arrival (absent for a checkpoint uploaded before they were kept)")),
                              401: DETAIL, 404: DETAIL,
                              503: OpenApiResponse(DETAIL, description="The artifact store could not be reached.")})
    def get(self, request, run_id: int, step: int):
        run = run_for_token(request, run_id)
        checkpoint = run.checkpoints.filter(step=step, in_store=True).first()
        if checkpoint is None:
            raise Http404(f"no uploaded checkpoint of step {step} in the control plane's store")
        try:
            files = stored_files_or_404(run.pk, step)
        except StoreUnavailable as exc:
            return store_unavailable(exc)
        # Streamed with bounded memory, and resumable with Range (runs/web/file_responses.py).
        return checkpoint_tar(request, [(file.path, file) for file in files], step_folder(step),
                              manifest_members(checkpoint), filename=f"run-{run_id}-{step_folder(step)}.tar")
