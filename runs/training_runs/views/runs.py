"""Runs: CRUD, the lifecycle verbs, and what a run reported (metrics, samples, logs, checkpoints)."""
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.decorators import action
from rest_framework.response import Response

from runs.alarms.serializers import AlarmSerializer
from runs.alarms.summary import with_alarm_summary
from runs.telemetry import metrics_query
from runs.telemetry.liveness import mark_lost_runs
from runs.telemetry.query_serializers import LOG_LEVELS, LogsQuery, MetricsQuery, SamplesQuery, parsed
from runs.telemetry.sample_pagination import SamplePagination
from runs.telemetry.serializers import CheckpointSerializer, LogLineSerializer, SampleSerializer
from runs.training_runs.lifecycle import cancel_run, clone_run, resume_run, start_run
from runs.training_runs.models import IllegalTransition, Run
from runs.training_runs.serializers import ResumeRequest, RunSerializer
from runs.web.errors import launch_checked
from runs.web.fields import StrictRequestSerializer
from runs.web.owned_viewset import OwnedViewSet
from runs.web.pagination import TelemetryPagination


class CloneRequest(StrictRequestSerializer):
    name = serializers.CharField(required=False, max_length=200)


class RunViewSet(OwnedViewSet[Run]):
    model = Run
    serializer_class = RunSerializer

    def get_queryset(self):
        runs = super().get_queryset().select_related("dataset", "config_template")
        runs = runs.prefetch_related("run_rewards__reward_function", "run_eval_rewards__reward_function")
        return with_alarm_summary(runs)

    def list(self, request, *args, **kwargs):
        mark_lost_runs(self.get_queryset())  # "on read": no run stays running after its worker died
        return super().list(request, *args, **kwargs)

    def retrieve(self, request, *args, **kwargs):
        mark_lost_runs(self.get_queryset().filter(pk=kwargs["pk"]))
        return super().retrieve(request, *args, **kwargs)

    def perform_destroy(self, run):
        if run.is_active:
            raise IllegalTransition(run, "deleted", f"run {run.pk} is {run.status}; cancel it before deleting it")
        run.delete()

    def _respond(self, run, code=status.HTTP_200_OK):
        return Response(RunSerializer(run, context=self.get_serializer_context()).data, status=code)

    @extend_schema(request=None, responses=RunSerializer)
    @action(detail=True, methods=["post"])
    def start(self, request, pk=None):
        with launch_checked():
            return self._respond(start_run(self.get_object()))

    @extend_schema(request=None, responses=RunSerializer)
    @action(detail=True, methods=["post"])
    def cancel(self, request, pk=None):
        return self._respond(cancel_run(self.get_object()))

    @extend_schema(request=ResumeRequest, responses=RunSerializer)
    @action(detail=True, methods=["post"])
    def resume(self, request, pk=None):
        """From the run's latest checkpoint; with a body, on as many machines as it names."""
        run = self.get_object()
        body = ResumeRequest(data=request.data, context={**self.get_serializer_context(), "run": run})
        body.is_valid(raise_exception=True)
        with launch_checked():
            return self._respond(resume_run(run, config=body.validated_data.get("config")))

    @extend_schema(request=CloneRequest, responses=RunSerializer)
    @action(detail=True, methods=["post"])
    def clone(self, request, pk=None):
        body = CloneRequest(data=request.data, context=self.get_serializer_context())
        body.is_valid(raise_exception=True)
        clone = clone_run(self.get_object(), owner=request.user, name=body.validated_data.get("name"))
        return self._respond(clone, status.HTTP_201_CREATED)

    @extend_schema(parameters=[MetricsQuery], responses=OpenApiTypes.OBJECT)
    @action(detail=True, methods=["get"])
    def metrics(self, request, pk=None):
        run = self.get_object()
        q = parsed(MetricsQuery, request)
        available = metrics_query.metric_names(run)
        wanted = q.get("names") or available
        answer = {
            "run": run.pk,
            "names": available,
            "series": {
                name: metrics_query.series(run, name, q.get("step_min"), q.get("step_max"), q["max_points"])
                for name in wanted
            },
        }
        if q["earlier_attempts"]:
            answer["earlier_attempts"] = metrics_query.earlier_attempts(run, wanted)
        return Response(answer)

    @extend_schema(parameters=[SamplesQuery], responses=SampleSerializer(many=True),
                   description="The sampled completions the trainer logged, in step and group order. A sample of "
                               "a multi-turn rollout carries its episode: `turns` (each message, its tool calls, "
                               "whether it was trained, the policy version that sampled it, its error) and "
                               "`end_reason`, which `end_reason=` filters on. The run keeps what its config's "
                               "samples_groups_per_step and samples_every_steps say. To read a large run whole, "
                               "walk it by `step` (or `step_min`/`step_max`, steps from /sample-steps/): each "
                               "answer is a range of an index, where a deep `page` counts every sample before it.")
    @action(detail=True, methods=["get"], pagination_class=SamplePagination)
    def samples(self, request, pk=None):
        run = self.get_object()
        q = parsed(SamplesQuery, request)
        lookups = {"step": "step", "step_min": "step__gte", "step_max": "step__lte", "end_reason": "end_reason"}
        filters = {lookup: q[name] for name, lookup in lookups.items() if q.get(name) is not None}
        return self._paginated(run.samples.filter(**filters), SampleSerializer)

    @extend_schema(parameters=[LogsQuery], responses=LogLineSerializer(many=True))
    @action(detail=True, methods=["get"], pagination_class=TelemetryPagination)
    def logs(self, request, pk=None):
        run = self.get_object()
        q = parsed(LogsQuery, request)
        lines = run.log_lines.filter(id__gt=q["after"])
        if "level" in q:
            lines = lines.filter(level__in=LOG_LEVELS[LOG_LEVELS.index(q["level"]):])
        if "source" in q:
            lines = lines.filter(source=q["source"])
        return self._paginated(lines, LogLineSerializer)

    @extend_schema(responses=CheckpointSerializer(many=True))
    @action(detail=True, methods=["get"], pagination_class=None)
    def checkpoints(self, request, pk=None):
        return Response(CheckpointSerializer(self.get_object().checkpoints.all(), many=True).data)

    @extend_schema(responses=AlarmSerializer(many=True),
                   description="Every alarm the run raised about its own signals, in step order: what tripped, "
                               "at which step, the numbers, and whether it stopped the run (alarm_stop_on).")
    @action(detail=True, methods=["get"], pagination_class=None)
    def alarms(self, request, pk=None):
        return Response(AlarmSerializer(self.get_object().alarms.all(), many=True).data)

    def _paginated(self, queryset, serializer_class):
        page = self.paginate_queryset(queryset)
        return self.get_paginated_response(serializer_class(page, many=True).data)
