"""Datasets, reward functions and training configs: the things a run is made from."""
from django.conf import settings
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.parsers import JSONParser, MultiPartParser
from rest_framework.response import Response

from runs.api.errors import PayloadTooLarge
from runs.api.serializers.configs import TrainingConfigSerializer
from runs.api.serializers.datasets import DatasetSerializer, too_large_message
from runs.api.serializers.reward_dry_run import DryRunRequest
from runs.api.serializers.rewards import RewardFunctionSerializer
from runs.api.views.code_authoring import CodeAuthoringChecked
from runs.api.views.owned import OwnedViewSet
from runs.models import Dataset, RewardFunction, TrainingConfig
from runs.rewards.dry_run import score_rows
from runs.rewards.rows import RowsUnavailable, rows_to_score


class DatasetViewSet(OwnedViewSet):
    model = Dataset
    serializer_class = DatasetSerializer
    parser_classes = [MultiPartParser, JSONParser]  # a file comes as multipart; the rest may be JSON

    def get_parsers(self):
        """A file is sent when a dataset is made; a change (name, description) is JSON."""
        if getattr(self, "request", None) is not None and self.request.method in ("PUT", "PATCH"):
            return [JSONParser()]
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


class RewardFunctionViewSet(CodeAuthoringChecked, OwnedViewSet):
    model = RewardFunction
    serializer_class = RewardFunctionSerializer

    @extend_schema(request=DryRunRequest, responses=OpenApiTypes.OBJECT)
    @action(detail=True, methods=["post"], url_path="dry-run")
    def dry_run(self, request, pk=None):
        """Scores typed completions for the first rows of a dataset, or a run's samples at a step.

        Each row is one call, in the sandbox (code) or a process of its own (built-ins), stopped
        past its time limit (DRY_RUN_TIMEOUT_S for built-ins): that row's error then has kind
        `timeout`, and the other rows are still scored."""
        reward = self.get_object()
        asked = DryRunRequest(data=request.data, context=self.get_serializer_context())
        asked.is_valid(raise_exception=True)
        params = asked.validated_data
        try:
            rows = rows_to_score(params)
        except RowsUnavailable as exc:
            raise ValidationError({exc.field: str(exc)}) from None
        return Response({**score_rows(reward, rows), "dataset": params["dataset"].pk})


class TrainingConfigViewSet(OwnedViewSet):
    model = TrainingConfig
    serializer_class = TrainingConfigSerializer
