"""The compare page (/compare/?runs=1,2,3): the page is a frame; compare.js draws it from the
compare API, so the page and a notebook read one answer. Without a valid selection it
explains how to pick runs and offers the user's recent runs to tick."""
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.urls import path, reverse

from runs.compare.comparison import DEFAULT_POINTS
from runs.compare.selection import MAX_RUNS, MIN_RUNS, BadSelection, missing_runs, parse_run_ids
from runs.compare.series import X_AXES
from runs.training_runs.models import Run

PICKER_SIZE = 30


@login_required
def compare(request):
    asked = [value for value in request.GET.getlist("runs") if value.strip()]
    if len(asked) > 1:
        # A plain form sends runs=1&runs=2; one comma-separated parameter is the shareable URL.
        return redirect(f"{reverse('page-compare')}?runs={','.join(asked)}")
    if not asked:
        return _pick(request, problem="")
    try:
        run_ids = parse_run_ids(asked[0])
    except BadSelection as exc:
        return _pick(request, problem=str(exc).capitalize() + ".", status=400)
    runs = Run.objects.visible_to(request.user).filter(pk__in=run_ids).select_related("owner")
    found = {run.pk: run for run in runs}
    absent = missing_runs(run_ids, found)
    if absent:
        problem = f"No run with id {', '.join(map(str, absent))} (or it is not yours to see)."
        return _pick(request, problem=problem, status=404)
    return render(request, "compare/page.html", {
        "runs": [found[run_id] for run_id in run_ids],
        "x_axes": X_AXES.items(),
        "page_data": {
            "runs": run_ids,
            "api": reverse("api-compare"),
            "samples_api": reverse("api-compare-samples"),
            "eval_examples_api": reverse("api-compare-eval-examples"),
            "eval_example_api": reverse("api-compare-eval-example"),
            "points": DEFAULT_POINTS,
        },
    })


def _pick(request, problem: str, status: int = 200):
    recent = Run.objects.visible_to(request.user).select_related("dataset", "owner")[:PICKER_SIZE]
    return render(request, "compare/pick.html", {
        "problem": problem, "recent": recent, "min_runs": MIN_RUNS, "max_runs": MAX_RUNS,
    }, status=status)


urlpatterns = [path("compare/", compare, name="page-compare")]
