"""Datasets in the library: upload, list, read, check and delete."""
from django.conf import settings
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_view
from rest_framework.parsers import MultiPartParser

from runs.datasets.models import Dataset
from runs.datasets.serializers import DatasetSerializer, too_large_message
from runs.web.errors import PAST_UPLOAD_QUOTA, TOO_MUCH_UNFINISHED, PayloadTooLarge
from runs.web.json_bodies import BoundedJSONParser
from runs.web.owned_viewset import OwnedViewSet


@extend_schema_view(create=extend_schema(responses={
    201: DatasetSerializer,
    429: OpenApiResponse(OpenApiTypes.OBJECT, description=(
        "A large upload (checked after its request, `checking`): " + TOO_MUCH_UNFINISHED)),
    507: OpenApiResponse(OpenApiTypes.OBJECT, description=PAST_UPLOAD_QUOTA)}))
class DatasetViewSet(OwnedViewSet[Dataset]):
    model = Dataset
    serializer_class = DatasetSerializer
    parser_classes = [MultiPartParser, BoundedJSONParser]  # a file comes as multipart; the rest may be JSON

    def get_parsers(self):
        """A file is sent when a dataset is made; a change (name, description) is JSON."""
        if getattr(self, "request", None) is not None and self.request.method in ("PUT", "PATCH"):
            return [BoundedJSONParser()]
        return super().get_parsers()

    def initial(self, request, *args, **kwargs):
        # Refuse an oversized upload from its Content-Length, before reading the body (and so
        # before authentication, whose CSRF check would parse it). The margin is for form fields.
        declared = _content_length(request)
        if request.method in ("POST", "PUT", "PATCH") and declared > settings.DATASET_UPLOAD_MAX_BYTES + 64 * 1024:
            raise PayloadTooLarge(too_large_message(declared))
        super().initial(request, *args, **kwargs)


def _content_length(request) -> int:
    try:
        return max(int(request.META.get("CONTENT_LENGTH") or 0), 0)
    except ValueError:
        return 0  # the body parser reports a malformed length itself
