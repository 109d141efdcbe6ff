"""Which runs a comparison is asked for: the `runs` query parameter as the schema states it, and
the runs it names that the user may see (the compare views and the evaluations across runs)."""
from drf_spectacular.utils import OpenApiParameter
from rest_framework.exceptions import NotFound

from runs.compare.selection import MAX_RUNS, MIN_RUNS, missing_runs
from runs.telemetry.liveness import mark_lost_runs
from runs.training_runs.models import Run
from runs.web.record_ids import MAX_ID

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
