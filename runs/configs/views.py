"""Training configs in the library: create (from a preset or not), read, change, delete."""
from drf_spectacular.utils import extend_schema
from rest_framework.decorators import action
from rest_framework.response import Response

from runs.configs.models import TrainingConfig
from runs.configs.serializers import ConfigPresetSerializer, TrainingConfigSerializer, config_presets
from runs.web.owned_viewset import OwnedViewSet


class TrainingConfigViewSet(OwnedViewSet[TrainingConfig]):
    model = TrainingConfig
    serializer_class = TrainingConfigSerializer

    @extend_schema(summary="The presets a config may start from, with the knobs each sets",
                   description="What `preset` takes on create and update; the same for every user.",
                   responses={200: ConfigPresetSerializer(many=True)})
    @action(detail=False, methods=["get"], pagination_class=None)
    def presets(self, request):
        return Response(ConfigPresetSerializer(config_presets(), many=True).data)
