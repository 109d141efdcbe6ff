"""Comparing 2 to 8 runs: aligned series, config diff and summary; samples side by side.

The compare page reads the same endpoints, so a notebook gets what the page shows.
"""
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.exceptions import NotFound
from rest_framework.response import Response
from rest_framework.views import APIView

from runs.actions.liveness import mark_lost_runs
from runs.api.serializers.compare import (
    ComparisonSchema, CompareQuery, CompareSamplesQuery, SamplesSideBySideSchema,
)
from runs.api.serializers.queries import parsed
from runs.compare.comparison import build_comparison
from runs.compare.samples import side_by_side
from runs.compare.selection import MAX_RUNS, MIN_RUNS, missing_runs
from runs.record_ids import MAX_ID
from runs.models import Run

# `runs=3,5,7`: an array in OpenAPI's comma-separated form, so that a client knows 2 to 8
# different ids are needed before the server says so.
RUNS_PARAMETER = OpenApiParameter(
    "runs", {"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": MAX_ID}, "minItems": MIN_RUNS,
             "maxItems": MAX_RUNS, "uniqueItems": True},
    OpenApiParameter.QUERY, required=True, style="form", explode=False,
    description=f"Ids of the {MIN_RUNS} to {MAX_RUNS} runs to compare, comma-separated, such as 3,5,7.")


def visible_runs(request, run_ids: list[int]) -> list[Run]:
    """The runs in the order asked; one the user may not see is a 404, as if it did not exist."""
    runs = Run.objects.visible_to(request.user).filter(pk__in=run_ids)
    mark_lost_runs(runs)
    found = {run.pk: run for run in runs.select_related("owner", "dataset")
             .prefetch_related("run_rewards__reward_function")}
    absent = missing_runs(run_ids, found)
    if absent:
        raise NotFound(f"no run with id {', '.join(map(str, absent))}")
    return [found[run_id] for run_id in run_ids]



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
