"""`GET /api/runs/<id>/dataset/`: a run's uploaded dataset file, for its worker, with the run's token.

A worker on another machine cannot read the control plane's DATA_DIR: it fetches the file here,
streamed, and checks it against the sha256 its launch spec carries (also sent as a header).
Only the run's own dataset: a token of another run reads as an unknown run (404), so run ids
and datasets do not leak. The file streams with bounded memory and takes HTTP Range, its sha256
as ETag (runs/web/file_responses.py), so a broken fetch goes on where it stopped.
"""
from pathlib import PurePosixPath
from typing import BinaryIO, cast

from django.http import Http404
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.views import APIView

from runs.accounts.run_tokens import run_for_token
from runs.artifacts.checkpoint_files import CheckpointFile
from runs.artifacts.pieces import of_file
from runs.datasets.models import Dataset
from runs.web.file_responses import RANGE_PARAMETERS, layout_etag, pieces_response, range_responses

CHECKSUM_HEADER = "X-Content-SHA256"


class RunDatasetView(APIView):
    authentication_classes = []
    permission_classes = []

    @extend_schema(
        summary="A run's uploaded dataset file, for its worker",
        description="Authorised by the run's own token (`Authorization: Bearer <token>`), as the ingest is. "
                    f"The `{CHECKSUM_HEADER}` header carries the file's sha256.",
        parameters=[OpenApiParameter("role", str, enum=["train", "eval"], required=False,
                                     description="eval: the run's evaluation dataset instead of its training one."),
                    *RANGE_PARAMETERS],
        responses={**range_responses("application/octet-stream", "The file"),
                   401: OpenApiResponse(description="No bearer token, or the token of a run that ended "
                                                    "more than RUN_TOKEN_GRACE_S ago."),
                   404: OpenApiResponse(description="Not this run's token, no uploaded file, or the file is gone.")})
    def get(self, request, run_id: int):
        run = run_for_token(request, run_id)
        role = request.query_params.get("role", "train")
        if role not in ("train", "eval"):
            raise Http404(f"role is train or eval, not {role!r}")
        dataset = run.eval_dataset if role == "eval" else run.dataset
        if dataset is None or dataset.source != Dataset.Source.UPLOAD or not dataset.file:
            raise Http404(f"this run's {role} dataset is not an uploaded file: the worker loads it itself")
        stored = stored_file(dataset)
        piece = of_file(stored)
        etag = f'"{dataset.sha256}"' if dataset.sha256 else layout_etag([piece])  # the bytes themselves
        response = pieces_response(request, [piece], etag=etag,
                                   last_modified=stored.mtime, content_type="application/octet-stream",
                                   filename=stored.path.name)
        response[CHECKSUM_HEADER] = dataset.sha256
        return response

    def get_authenticate_header(self, request):
        return 'Bearer realm="run-ingest"'


def stored_file(dataset: Dataset) -> CheckpointFile:
    """The dataset's file in the control plane's storage, read when sent; Http404 when it is gone."""
    name, storage = dataset.file.name, dataset.file.storage
    if not name:
        raise Http404(f"dataset {dataset.name!r} has no file on the control plane")
    try:
        size, modified = storage.size(name), storage.get_modified_time(name).timestamp()
    except (FileNotFoundError, NotImplementedError):
        raise Http404(f"the file of dataset {dataset.name!r} is no longer on the control plane") from None
    # Django's File proxies the binary stream it wraps (read, seek, the with block).
    return CheckpointFile(PurePosixPath(name), size, modified, lambda: cast(BinaryIO, storage.open(name, "rb")))
