"""`GET /api/runs/<id>/secrets/`: the API keys of a run's endpoint judges, for its worker alone.

A judge's key is stored sealed (runs/rewards/secrets.py) and left out of the launch spec, which
is stored with the run and shown to its owner; the worker fetches the keys here with the run's
own token (LaunchSpec.secrets_url), and only while the run is queued, starting or running: a
user's session or API token opens nothing here, and a token of another run reads as an unknown
run (404), as a run's dataset does (run_dataset.py). The answer is never cached.
"""
from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from runs.accounts.run_tokens import BEARER_REALM, run_for_token
from runs.rewards.models.function import RewardFunction
from runs.rewards.secrets import KeyUnreadable, unseal_api_key
from runs.training_runs.models import ACTIVE, Run


def judges_with_keys(run: Run) -> list[RewardFunction]:
    """The run's training and evaluation judges that hold a key, each once."""
    ids = {*run.run_rewards.values_list("reward_function", flat=True),
           *run.run_eval_rewards.values_list("reward_function", flat=True)}
    return list(RewardFunction.objects.filter(pk__in=ids, kind=RewardFunction.Kind.JUDGE)
                .exclude(api_key_sealed="").order_by("pk"))


class RunSecretsView(APIView):
    authentication_classes = []  # the run's bearer token only: never a user's session or API token
    permission_classes = []

    @extend_schema(
        summary="A run's judge API keys, for its worker",
        description="Authorised by the run's own token (`Authorization: Bearer <token>`), only while the run is "
                    "queued, starting or running. Keys by reward name, for the run's judges that have one.",
        responses={200: inline_serializer("RunSecrets", {"api_keys": serializers.DictField(
                       child=serializers.CharField(), help_text="reward name: its endpoint's API key")}),
                   401: OpenApiResponse(description="No bearer token, or the token of a run that ended more than "
                                                    "RUN_TOKEN_GRACE_S ago."),
                   403: OpenApiResponse(description="The run is not queued, starting or running."),
                   404: OpenApiResponse(description="Not this run's token."),
                   409: OpenApiResponse(description="A stored key no longer opens (SECRET_KEY changed).")})
    def get(self, request, run_id: int):
        run = run_for_token(request, run_id)
        if run.status not in ACTIVE:
            return never_cached(Response(
                {"detail": f"run {run.pk} is {run.status}: its judges' keys are given only while it is queued, "
                           "starting or running"}, status=status.HTTP_403_FORBIDDEN))
        keys = {}
        for judge in judges_with_keys(run):
            try:
                keys[judge.name] = unseal_api_key(judge.api_key_sealed)
            except KeyUnreadable as exc:
                return never_cached(Response({"detail": f"reward {judge.name!r}: {exc}"},
                                             status=status.HTTP_409_CONFLICT))
        return never_cached(Response({"api_keys": keys}))

    def get_authenticate_header(self, request):
        return BEARER_REALM


def never_cached(response: Response) -> Response:
    response["Cache-Control"] = "no-store"
    return response
