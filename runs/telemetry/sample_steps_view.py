"""`GET /api/runs/<id>/sample-steps/?after=<step>`: the steps that have sampled completions.

The run page's completions browser lists these steps to go back to; after a reconnect it
asks only for the steps after the newest one it knows.
"""
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.generics import get_object_or_404
from rest_framework.response import Response
from rest_framework.views import APIView

from runs.telemetry.models import Sample
from runs.training_runs.models import Run


class SampleStepsQuery(serializers.Serializer):
    after = serializers.IntegerField(required=False, min_value=0, help_text="Only steps above this one.")


class SampleStepsView(APIView):
    @extend_schema(parameters=[SampleStepsQuery],
                   responses=inline_serializer(
                       "SampleSteps", {"steps": serializers.ListField(child=serializers.IntegerField())}))
    def get(self, request, run_id: int):
        run = get_object_or_404(Run.objects.visible_to(request.user), pk=run_id)
        query = SampleStepsQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        return Response({"steps": Sample.objects.steps_of(run.pk, after=query.validated_data.get("after"))})
