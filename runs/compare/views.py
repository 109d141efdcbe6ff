"""Comparing 2 to 8 runs: aligned series, config diff and summary; samples side by side.

The compare page reads the same endpoints, so a notebook gets what the page shows.
"""
from drf_spectacular.utils import extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView

from runs.compare.compared_runs import RUNS_PARAMETER, visible_runs
from runs.compare.comparison import build_comparison
from runs.compare.samples import side_by_side
from runs.compare.serializers import CompareQuery, CompareSamplesQuery, ComparisonSchema, SamplesSideBySideSchema
from runs.telemetry.query_serializers import parsed


class CompareView(APIView):
    @extend_schema(parameters=[CompareQuery, RUNS_PARAMETER], responses=ComparisonSchema, operation_id="compare_runs")
    def get(self, request):
        query = parsed(CompareQuery, request)
        runs = visible_runs(request, query["runs"])
        return Response(build_comparison(runs, query.get("metrics") or [], query["x"], query["points"]))


class CompareSamplesView(APIView):
    @extend_schema(parameters=[CompareSamplesQuery, RUNS_PARAMETER], responses=SamplesSideBySideSchema,
                   operation_id="compare_samples")
    def get(self, request):
        query = parsed(CompareSamplesQuery, request)
        runs = visible_runs(request, query["runs"])
        return Response(side_by_side([run.pk for run in runs], query.get("step")))
