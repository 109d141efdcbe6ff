"""Runs: CRUD, the lifecycle verbs, and what a run reported (metrics, samples, logs, checkpoints)."""
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.decorators import action
from rest_framework.pagination import PageNumberPagination
from rest_framework.response import Response

from runs import metrics_query
from runs.actions.lifecycle import cancel_run, clone_run, resume_run, start_run
from runs.api.serializers.runs import RunSerializer
from runs.api.serializers.telemetry import CheckpointSerializer, LogLineSerializer, SampleSerializer
from runs.api.views.owned import OwnedViewSet
from runs.models import IllegalTransition, Run


class TelemetryPagination(PageNumberPagination):
    page_size = 100
    page_size_query_param = "page_size"
    max_page_size = 1000


class MetricsQuery(serializers.Serializer):
    names = serializers.CharField(required=False, help_text="Comma-separated metric names; all when omitted.")
    step_min = serializers.IntegerField(required=False, min_value=0)
    step_max = serializers.IntegerField(required=False, min_value=0)
    max_points = serializers.IntegerField(required=False, min_value=2, max_value=metrics_query.MAX_POINTS_LIMIT,
                                          default=metrics_query.DEFAULT_MAX_POINTS)

    def validate(self, attrs):
        if attrs.get("step_min") is not None and attrs.get("step_max") is not None and attrs["step_min"] > attrs["step_max"]:
            raise serializers.ValidationError({"step_max": "must not be below step_min"})
        return attrs


class StepRangeQuery(serializers.Serializer):
    step = serializers.IntegerField(required=False, min_value=0)
    step_min = serializers.IntegerField(required=False, min_value=0)
    step_max = serializers.IntegerField(required=False, min_value=0)


class CloneRequest(serializers.Serializer):
    name = serializers.CharField(required=False, max_length=200)


class RunViewSet(OwnedViewSet):
    model = Run
    serializer_class = RunSerializer

    def get_queryset(self):
        runs = super().get_queryset().select_related("dataset", "config_template")
        return runs.prefetch_related("run_rewards__reward_function")

    def perform_destroy(self, run):
        if run.is_active:
            raise IllegalTransition(run, "deleted", f"run {run.pk} is {run.status}; cancel it before deleting it")
        run.delete()

    def _respond(self, run, code=status.HTTP_200_OK):
        return Response(RunSerializer(run, context=self.get_serializer_context()).data, status=code)

    @extend_schema(request=None, responses=RunSerializer)
    @action(detail=True, methods=["post"])
    def start(self, request, pk=None):
        return self._respond(start_run(self.get_object()))

    @extend_schema(request=None, responses=RunSerializer)
    @action(detail=True, methods=["post"])
    def cancel(self, request, pk=None):
        return self._respond(cancel_run(self.get_object()))

    @extend_schema(request=None, responses=RunSerializer)
    @action(detail=True, methods=["post"])
    def resume(self, request, pk=None):
        return self._respond(resume_run(self.get_object()))

    @extend_schema(request=CloneRequest, responses=RunSerializer)
    @action(detail=True, methods=["post"])
    def clone(self, request, pk=None):
        body = CloneRequest(data=request.data)
        body.is_valid(raise_exception=True)
        clone = clone_run(self.get_object(), owner=request.user, name=body.validated_data.get("name"))
        return self._respond(clone, status.HTTP_201_CREATED)

    @extend_schema(parameters=[MetricsQuery], responses=OpenApiTypes.OBJECT)
    @action(detail=True, methods=["get"])
    def metrics(self, request, pk=None):
        run = self.get_object()
        query = MetricsQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        q = query.validated_data
        available = metrics_query.metric_names(run)
        wanted = [n.strip() for n in q["names"].split(",") if n.strip()] if q.get("names") else available
        return Response({
            "run": run.pk,
            "names": available,
            "series": {
                name: metrics_query.series(run, name, q.get("step_min"), q.get("step_max"), q["max_points"])
                for name in wanted
            },
        })

    @extend_schema(parameters=[StepRangeQuery], responses=SampleSerializer(many=True))
    @action(detail=True, methods=["get"], pagination_class=TelemetryPagination)
    def samples(self, request, pk=None):
        run = self.get_object()
        query = StepRangeQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        samples = run.samples.all()
        q = query.validated_data
        if "step" in q:
            samples = samples.filter(step=q["step"])
        if "step_min" in q:
            samples = samples.filter(step__gte=q["step_min"])
        if "step_max" in q:
            samples = samples.filter(step__lte=q["step_max"])
        return self._paginated(samples, SampleSerializer)

    @extend_schema(parameters=[OpenApiParameter("after", int, description="Only lines with a larger id.")],
                   responses=LogLineSerializer(many=True))
    @action(detail=True, methods=["get"], pagination_class=TelemetryPagination)
    def logs(self, request, pk=None):
        run = self.get_object()
        after = serializers.IntegerField(min_value=0).run_validation(request.query_params.get("after", 0))
        return self._paginated(run.log_lines.filter(id__gt=after), LogLineSerializer)

    @extend_schema(responses=CheckpointSerializer(many=True))
    @action(detail=True, methods=["get"])
    def checkpoints(self, request, pk=None):
        return Response(CheckpointSerializer(self.get_object().checkpoints.all(), many=True).data)

    def _paginated(self, queryset, serializer_class):
        page = self.paginate_queryset(queryset)
        return self.get_paginated_response(serializer_class(page, many=True).data)
