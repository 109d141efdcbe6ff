"""A worker uploads a checkpoint with the run's token: each file in chunks, then the manifest.

- `GET  /api/runs/<id>/uploads/<step>/files/<path>`: how many bytes of the file arrived (0: none);
- `PUT  /api/runs/<id>/uploads/<step>/files/<path>`: a chunk, at the offset in `Upload-Offset`;
  409 with `received` when that is not where the file ends, so the worker sends from there;
- `POST /api/runs/<id>/uploads/<step>/complete`: the manifest (worker/trainer/checkpoint_manifest.py).
  Every file is checked; 422 names those to send again, else the checkpoint is listed;
- `GET  /api/runs/<id>/uploads/<step>/archive`: a listed checkpoint as a tar, for a worker that
  resumes the run without having written it; beside its folder, the manifest it was checked
  against on arrival (ARCHIVE_MANIFEST), so the worker checks every file it unpacks.
A full disk is a 507 that says so, an artifact store (bucket) that is away a 503; what arrived
before stays in both cases. A chunk that would take the run's checkpoints past their quota
(RUN_CHECKPOINT_QUOTA_GB) is a 507 too, before it is written: the worker keeps its copy and
tries again, so an operator who raises the quota lets it go on. A chunk over
CHECKPOINT_CHUNK_MAX_MB, or a token that is not the run's, is refused before its bytes are read
(runs/api/request_guard.py).
"""
import errno

from django.db.models import Sum
from django.http import Http404
from django.utils import timezone
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, inline_serializer
from pydantic import ValidationError as SchemaError
from rest_framework import serializers, status
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser
from rest_framework.response import Response
from rest_framework.views import APIView

from runs.actions.checkpoints import register_uploaded_checkpoint
from runs.api.file_responses import RANGE_PARAMETERS, range_responses
from runs.api.views.checkpoint_download import checkpoint_tar, manifest_members, stored_files, store_unavailable
from runs.api.views.ingest import schema_problems
from runs.api.views.run_dataset import run_for_token
from runs.artifacts import checkpoint_store as store
from runs.artifacts.stores import StoreUnavailable, step_folder
from worker.trainer.checkpoint_manifest import ARCHIVE_MANIFEST, CheckpointManifest

CHUNK = 1024 * 1024
RECEIVED = inline_serializer("UploadReceived", {"received": serializers.IntegerField()})
DETAIL = inline_serializer("UploadProblem", {"detail": serializers.CharField()})


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
                                                description="Where in the file this chunk starts.")],
                   responses={200: RECEIVED, 400: DETAIL, 401: DETAIL, 404: DETAIL,
                              409: OpenApiResponse(RECEIVED, description="Send from `received` instead."),
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
        body = iter(lambda: request.stream.read(CHUNK) if request.stream else b"", b"")
        try:
            # DRF reads exactly Content-Length bytes (none without one): that is what would be written.
            store.check_quota(checkpoint_bytes_held(run), _declared_length(request))
            received = store.append_chunk(run.pk, step, relative, int(offset), body)
        except store.OffsetMismatch as exc:
            return Response({"detail": str(exc), "received": exc.received}, status=status.HTTP_409_CONFLICT)
        except store.QuotaExceeded as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_507_INSUFFICIENT_STORAGE)
        except OSError as exc:
            return _disk_full_or_raise(exc)
        return Response({"received": received})


class CheckpointUploadCompleteView(_RunTokenView):
    parser_classes = [JSONParser]

    @extend_schema(
        summary="Checks an uploaded checkpoint against its manifest and lists it",
        request=inline_serializer("CheckpointManifest", {
            "step": serializers.IntegerField(), "model_version": serializers.IntegerField(),
            "local_path": serializers.CharField(), "files": serializers.ListField()}),
        responses={200: inline_serializer("UploadedCheckpoint", {"id": serializers.IntegerField(),
                                                                   "size_bytes": serializers.IntegerField()}),
                   400: DETAIL, 401: DETAIL, 404: DETAIL,
                   422: OpenApiResponse(inline_serializer("UploadMismatch", {
                       "detail": serializers.CharField(), "send_again": serializers.ListField()}),
                       description="Files missing or different from the manifest; send them again."),
                   503: OpenApiResponse(DETAIL, description="The artifact store (a bucket) could not take it: "
                                                            "complete again later; what arrived stays.")})
    def post(self, request, run_id: int, step: int):
        run = run_for_token(request, run_id)
        try:
            manifest = CheckpointManifest.model_validate(request.data)
        except ParseError as exc:
            return Response({"detail": f"the body is not JSON: {exc.detail}"}, status=status.HTTP_400_BAD_REQUEST)
        except SchemaError as exc:
            return Response({"detail": "the manifest was refused", "errors": schema_problems(exc)},
                            status=status.HTTP_400_BAD_REQUEST)
        if manifest.step != step:
            return Response({"detail": f"the manifest is for step {manifest.step}, the URL for step {step}"},
                            status=status.HTTP_400_BAD_REQUEST)
        if wrong := store.mismatched_files(run.pk, step, manifest):
            return Response({"detail": f"{len(wrong)} file(s) missing or not as the manifest says; send them again",
                             "send_again": wrong}, status=status.HTTP_422_UNPROCESSABLE_ENTITY)
        try:
            checkpoint = register_uploaded_checkpoint(run, manifest, received_at=timezone.now())
        except StoreUnavailable as exc:
            return store_unavailable(exc)
        except OSError as exc:
            return _disk_full_or_raise(exc)
        return Response({"id": checkpoint.pk, "size_bytes": checkpoint.size_bytes})


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
            files = stored_files(run.pk, step)
        except StoreUnavailable as exc:
            return store_unavailable(exc)
        # Streamed with bounded memory, and resumable with Range (runs/api/file_responses.py).
        return checkpoint_tar(request, [(file.path, file) for file in files], step_folder(step),
                              manifest_members(checkpoint), filename=f"run-{run_id}-{step_folder(step)}.tar")
