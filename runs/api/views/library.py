"""Datasets, reward functions and training configs: the things a run is made from."""
from django.conf import settings
from rest_framework.parsers import FormParser, JSONParser, MultiPartParser

from runs.api.errors import PayloadTooLarge
from runs.api.serializers.configs import TrainingConfigSerializer
from runs.api.serializers.datasets import DatasetSerializer, too_large_message
from runs.api.serializers.rewards import RewardFunctionSerializer
from runs.api.views.owned import OwnedViewSet
from runs.models import Dataset, RewardFunction, TrainingConfig


class DatasetViewSet(OwnedViewSet):
    model = Dataset
    serializer_class = DatasetSerializer
    parser_classes = [MultiPartParser, FormParser, JSONParser]

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


class RewardFunctionViewSet(OwnedViewSet):
    model = RewardFunction
    serializer_class = RewardFunctionSerializer


class TrainingConfigViewSet(OwnedViewSet):
    model = TrainingConfig
    serializer_class = TrainingConfigSerializer
