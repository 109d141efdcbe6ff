"""The run page's evaluation panel: the evaluations so far travel with the page (its table is
drawn without a request), with the endpoints run_evaluation.js reads for the rest."""
from django.urls import reverse

from runs.evaluation.history import run_evaluations


def _template(name: str, run_id: int, placeholder: str) -> str:
    """A URL with `{placeholder}` where the script puts a step or an index."""
    return reverse(name, args=[run_id, 0]).replace("/0/", f"/{{{placeholder}}}/")


def evaluation_page_data(run) -> dict:
    return {"evaluation": {
        **run_evaluations(run),
        "urls": {
            "evaluations": reverse("run-evaluations", args=[run.pk]),
            "evaluation": _template("run-evaluation", run.pk, "step"),
            "examples": reverse("run-eval-examples", args=[run.pk]),
            "example": _template("run-eval-example", run.pk, "index"),
        },
    }}
