"""Reward functions in the library, and the dry run that scores a few rows with one."""
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from runs.accounts.code_authoring import CodeAuthoringChecked
from runs.dry_runs import answers as dry_run_answers
from runs.rewards import model_dry_run
from runs.rewards.dry_run import score_rows
from runs.rewards.dry_run_serializers import DryRunRequest, RewardDryRunStatus
from runs.rewards.models.function import RewardFunction
from runs.rewards.rows import RowsUnavailable, rows_to_score
from runs.rewards.serializers import RewardFunctionSerializer
from runs.web.errors import TOO_MUCH_UNFINISHED
from runs.web.owned_viewset import OwnedViewSet


class RewardFunctionViewSet(CodeAuthoringChecked, OwnedViewSet):
    model = RewardFunction
    serializer_class = RewardFunctionSerializer

    @extend_schema(request=DryRunRequest, responses={
        200: OpenApiResponse(OpenApiTypes.OBJECT, description="A built-in or code: the rows scored, at once."),
        202: OpenApiResponse(RewardDryRunStatus, description=(
            "A judge or a reward model: the dry run is queued for the control plane's consumer (which serves or "
            "loads the model); poll its `url` (Location) until `state` is done or failed.")),
        429: OpenApiResponse(OpenApiTypes.OBJECT, description=(
            "A judge or a reward model: " + TOO_MUCH_UNFINISHED + " (each may start a model on the control "
            "plane's machine: BACKGROUND_UNFINISHED_PER_ACCOUNT_REWARD_DRY_RUNS, 1 by default)"))})
    @action(detail=True, methods=["post"], url_path="dry-run")
    def dry_run(self, request, pk=None):
        """Scores typed completions for the first rows of a dataset, or a run's samples at a step.

        Built-ins and code answer at once: each row is one call, in the sandbox (code) or a process
        of its own (built-ins), stopped past its time limit (DRY_RUN_TIMEOUT_S for built-ins): that
        row's error then has kind `timeout`, and the other rows are still scored. A judge or a reward
        model is scored by the control plane's consumer: 202 with where to follow it."""
        reward = self.get_object()
        asked = DryRunRequest(data=request.data, context=self.get_serializer_context())
        asked.is_valid(raise_exception=True)
        params = asked.validated_data
        if model_dry_run.is_queued(reward) and (problem := model_dry_run.problem(reward)):
            raise ValidationError({"detail": problem})
        try:
            rows = rows_to_score(params)
        except RowsUnavailable as exc:
            raise ValidationError({exc.field: str(exc)}) from None
        if model_dry_run.is_queued(reward):  # a model is never served or loaded here
            dry_run = model_dry_run.ask(reward, request.user, params["dataset"].pk, rows)
            return dry_run_answers.queued(RewardDryRunStatus, dry_run, self.get_serializer_context())
        return Response({**score_rows(reward, rows, requested_by=request.user.pk), "dataset": params["dataset"].pk})

    @extend_schema(responses={200: RewardDryRunStatus}, parameters=[
        OpenApiParameter("dry_run", int, OpenApiParameter.PATH, description="The id the dry run's 202 gave.")])
    @action(detail=True, methods=["get"], url_path=r"dry-runs/(?P<dry_run>\d+)")
    def dry_run_status(self, request, pk=None, dry_run=None):
        """How far a judge's or a reward model's dry run is, and its rows when done. Only the user who
        asked it (or staff) sees it."""
        shown = dry_run_answers.asked_by(request.user, self.get_object(), dry_run)
        return Response(RewardDryRunStatus(shown, context=self.get_serializer_context()).data)
