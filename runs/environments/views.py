"""Environments in the library, and the dry run that plays one episode of one."""
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from runs.accounts import authoring
from runs.accounts.code_authoring import CodeAuthoringChecked
from runs.dry_runs import answers as dry_run_answers
from runs.dry_runs.model_play import model_play_problem
from runs.environments import model_dry_run
from runs.environments.dry_run import Play, play_episode
from runs.environments.dry_run_serializers import EnvironmentDryRunRequest, EnvironmentDryRunStatus
from runs.environments.models.environment import Environment
from runs.environments.serializers import EnvironmentSerializer
from runs.rewards.rows import RowsUnavailable, raw_rows
from runs.web.errors import TOO_MUCH_UNFINISHED
from runs.web.owned_viewset import OwnedViewSet


class EnvironmentViewSet(CodeAuthoringChecked, OwnedViewSet):
    model = Environment
    serializer_class = EnvironmentSerializer
    # Code, and a verifiers environment whose id the operator has not allowed, need the permission.
    authoring_refusal = staticmethod(authoring.environment_refusal)

    def get_queryset(self):
        return super().get_queryset().select_related("dataset").prefetch_related("environment_rewards__reward_function")

    @extend_schema(request=EnvironmentDryRunRequest, responses={
        200: OpenApiResponse(OpenApiTypes.OBJECT, description="Typed turns: the episode, played at once."),
        202: OpenApiResponse(EnvironmentDryRunStatus, description=(
            "The model plays: the dry run is queued for the control plane's consumer; poll its `url` "
            "(Location) until `state` is done (its `result` is what typed turns answer) or failed.")),
        429: OpenApiResponse(OpenApiTypes.OBJECT, description="The model plays: " + TOO_MUCH_UNFINISHED)})
    @action(detail=True, methods=["post"], url_path="dry-run")
    def dry_run(self, request, pk=None):
        """Plays one episode on a dataset row with typed assistant turns (at once) or the model (queued)."""
        environment = self.get_object()
        asked = EnvironmentDryRunRequest(data=request.data, context=self.get_serializer_context())
        asked.is_valid(raise_exception=True)
        params = asked.validated_data
        if environment.kind == Environment.Kind.VERIFIERS:
            raise ValidationError({"detail": "a verifiers environment is played by the workers that have it "
                                             "installed; dry runs play built-in and code environments"})
        if "turns" not in params and (problem := model_play_problem(params["model"])):
            raise ValidationError({"model": problem})
        dataset = params.get("dataset") or environment.dataset
        if dataset is None:
            raise ValidationError({"dataset": "choose the dataset whose row opens the episode"})
        if problem := dataset.readiness_problem():
            raise ValidationError({"dataset": problem})
        row = _row(dataset, params["row"])
        if "turns" not in params:  # a model is never loaded here: the consumer plays it
            dry_run = model_dry_run.ask(environment, request.user, dataset, params["row"], row, params)
            return dry_run_answers.queued(EnvironmentDryRunStatus, dry_run, self.get_serializer_context())
        played = play_episode(environment, Play(
            row=row, prompt_column=dataset.prompt_column, turns=params.get("turns"), model=params["model"],
            max_turns=params["max_turns"], tool_call_format=params["tool_call_format"]), requested_by=request.user.pk)
        return Response({"environment": environment.pk, "kind": environment.kind, "dataset": dataset.pk,
                         "row": params["row"], **played})

    @extend_schema(responses={200: EnvironmentDryRunStatus}, parameters=[
        OpenApiParameter("dry_run", int, OpenApiParameter.PATH, description="The id the dry run's 202 gave.")])
    @action(detail=True, methods=["get"], url_path=r"dry-runs/(?P<dry_run>\d+)")
    def dry_run_status(self, request, pk=None, dry_run=None):
        """How far a model-played dry run is (queued, loading, turn k of n), and its result when done.
        Only the user who asked it (or staff) sees it."""
        shown = dry_run_answers.asked_by(request.user, self.get_object(), dry_run)
        return Response(EnvironmentDryRunStatus(shown, context=self.get_serializer_context()).data)


def _row(dataset, index: int) -> dict:
    try:
        rows = raw_rows(dataset, index + 1)
    except RowsUnavailable as exc:
        raise ValidationError({exc.field: str(exc)}) from None
    if len(rows) <= index:
        raise ValidationError({"row": f"dataset {dataset.name!r} has {len(rows)} rows here; choose a row below that"})
    if dataset.prompt_column not in rows[index]:
        raise ValidationError({"dataset": f"row {index} of {dataset.name!r} has no prompt column "
                                          f"{dataset.prompt_column!r}"})
    return rows[index]
