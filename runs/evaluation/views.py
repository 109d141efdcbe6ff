"""A run's evaluations: the summary of each, one evaluation's examples, every example across
evaluations ("which flipped, which never moved"), one example followed; and the same example
in the runs being compared. The run page and the compare page read these endpoints.

An example passes an evaluation when at least half its answers pass (runs/evaluation/passing.py).
"""
from django.http import Http404
from drf_spectacular.utils import extend_schema
from rest_framework.generics import GenericAPIView
from rest_framework.response import Response
from rest_framework.views import APIView

from runs.compare.compared_runs import RUNS_PARAMETER, visible_runs
from runs.compare.serializers import RunSelectionQuery
from runs.evaluation.across_runs import example_across_runs, shared_examples
from runs.evaluation.history import evaluated_steps, evaluation_at, run_evaluations
from runs.evaluation.serializers import (
    ClassificationQuery,
    EvalExampleQuery,
    EvaluationsSchema,
    ExampleAcrossRunsSchema,
    ExamplesSchema,
    FollowedExampleSchema,
    OutcomeQuery,
    OutcomeSchema,
    SharedExamplesSchema,
)
from runs.evaluation.trajectories import examples_overview, followed, outcome_at
from runs.telemetry.query_serializers import parsed
from runs.training_runs.models import Run
from runs.web.pagination import TelemetryPagination

SHOWN_STEPS = 20  # in a 404's message, the evaluated steps named


class EvaluationsView(APIView):
    @extend_schema(responses=EvaluationsSchema, operation_id="run_evaluations",
                   description="One row per evaluation of the run, oldest first: pass@1, mean score, and how many "
                               "examples flipped to passing or to failing since the evaluation before.")
    def get(self, request, run_id: int):
        return Response(run_evaluations(Run.objects.visible_or_404(request.user, run_id)))


class EvaluationOutcomesView(GenericAPIView):
    pagination_class = TelemetryPagination

    @extend_schema(parameters=[OutcomeQuery], responses=OutcomeSchema(many=True), operation_id="run_evaluation",
                   description="The examples of the evaluation at this step, by index, each with its answers and "
                               "whether it passes now and passed at the evaluation before.")
    def get(self, request, run_id: int, step: int):
        run = Run.objects.visible_or_404(request.user, run_id)
        outcome = parsed(OutcomeQuery, request).get("outcome")
        evaluation = evaluation_at(run, step)
        if evaluation is None:
            raise Http404(no_evaluation_message(run, step))
        rows = run.eval_outcomes.filter(step=step).order_by("index")
        if outcome:
            rows = rows.filter(index__in=evaluation.indices(outcome))
        page = self.paginate_queryset(rows)
        assert page is not None, "the view has its pagination_class"
        return self.get_paginated_response([
            {**outcome_at(row), "index": row.index, "key": row.key, "prompt": row.prompt,
             **evaluation.marks(row.index)} for row in page])


def no_evaluation_message(run, step: int) -> str:
    steps = evaluated_steps(run)
    if not steps:
        return f"run {run.pk} has no evaluations yet"
    named = ", ".join(map(str, steps[:SHOWN_STEPS])) + (", ..." if len(steps) > SHOWN_STEPS else "")
    return f"run {run.pk} was not evaluated at step {step}; it was at steps {named}"


class EvalExamplesView(APIView):
    @extend_schema(parameters=[ClassificationQuery], responses=ExamplesSchema, operation_id="run_eval_examples",
                   description="Every example of the run's evaluation set with its pass rate at each evaluation, "
                               "how often it flipped, and its class: which examples were learned or forgotten, "
                               "which are unstable, and which never moved.")
    def get(self, request, run_id: int):
        run = Run.objects.visible_or_404(request.user, run_id)
        return Response(examples_overview(run, parsed(ClassificationQuery, request).get("classification")))


class EvalExampleView(APIView):
    @extend_schema(responses=FollowedExampleSchema, operation_id="run_eval_example",
                   description="One example followed: its prompt and, at every evaluation, its answers.")
    def get(self, request, run_id: int, index: int):
        run = Run.objects.visible_or_404(request.user, run_id)
        example = followed(run, index)
        if example is None:
            raise Http404(f"run {run.pk} has no evaluation example {index}")
        return Response(example)


class CompareEvalExamplesView(APIView):
    @extend_schema(parameters=[RunSelectionQuery, RUNS_PARAMETER], responses=SharedExamplesSchema,
                   operation_id="compare_eval_examples",
                   description="Per run, how many of its examples were learned, forgotten, ...; then the examples "
                               "(by key) that at least two of the runs were evaluated on, with their class in each.")
    def get(self, request):
        runs = visible_runs(request, parsed(RunSelectionQuery, request)["runs"])
        return Response(shared_examples(runs))


class CompareEvalExampleView(APIView):
    @extend_schema(parameters=[EvalExampleQuery, RUNS_PARAMETER], responses=ExampleAcrossRunsSchema,
                   operation_id="compare_eval_example",
                   description="One example, by key, followed in each run side by side: per run, its answers and "
                               "whether it passed at every evaluation.")
    def get(self, request):
        query = parsed(EvalExampleQuery, request)
        example = example_across_runs(visible_runs(request, query["runs"]), query["key"])
        if example is None:
            raise Http404(f"none of runs {', '.join(map(str, query['runs']))} was evaluated on an example "
                          f"with key {query['key']}")
        return Response(example)
