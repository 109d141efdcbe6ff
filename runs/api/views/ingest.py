"""`POST /api/runs/<id>/events/`: where trainers and supervisors report, with the run's own token."""
from drf_spectacular.utils import extend_schema, inline_serializer
from pydantic import ValidationError as SchemaError
from rest_framework import serializers, status
from rest_framework.exceptions import AuthenticationFailed, ParseError
from rest_framework.response import Response
from rest_framework.views import APIView

from runs.actions.ingest import ingest_batch
from runs.api.run_tokens import BEARER_REALM, WRONG_TOKEN_FOR_EVENTS, bearer_of, run_of_bearer
from runs.api.strict_bodies import pydantic_body
from runs.models import Run
from worker.trainer.events import EventBatch


def bearer_token(request) -> str:
    return bearer_of(request.META.get("HTTP_AUTHORIZATION", ""))


def run_of_token(request, run_id: int) -> Run | None:
    """Run `run_id` if the request's bearer token is its own; None for a wrong token and for an
    unknown run alike, so ids don't leak; a 401 for the token of a run that ended
    (runs/api/run_tokens.py, which the request guard asks too)."""
    return run_of_bearer(run_id, request.META.get("HTTP_AUTHORIZATION", ""))


def authorized_run(request, run_id: int) -> Run:
    """The run whose token this is, for the ingest: a 401 otherwise."""
    run = run_of_token(request, run_id)
    if run is None:
        raise AuthenticationFailed(WRONG_TOKEN_FOR_EVENTS)
    return run


def schema_problems(exc: SchemaError) -> list[str]:
    return [f"{'.'.join(map(str, e['loc'])) or 'batch'}: {e['msg']}" for e in exc.errors()[:20]]


class RunEventsView(APIView):
    authentication_classes = []
    permission_classes = []

    @extend_schema(
        request=pydantic_body(EventBatch, {"source": serializers.CharField(), "events": serializers.ListField()}),
        responses=inline_serializer("IngestReply", {
            "stored": serializers.IntegerField(), "duplicates": serializers.IntegerField(),
            "status": serializers.CharField(), "cancel_requested": serializers.BooleanField()}),
        description="A batch of typed events (see worker/trainer/events.py). Stored whole or not at all.",
    )
    def post(self, request, run_id: int):
        run = authorized_run(request, run_id)
        try:
            payload = request.data
        except ParseError as exc:
            return Response({"detail": f"the body is not JSON: {exc.detail}"}, status=status.HTTP_400_BAD_REQUEST)
        try:
            batch = EventBatch.model_validate(payload)
        except SchemaError as exc:
            return Response({"detail": "the batch was refused; nothing was stored", "errors": schema_problems(exc)},
                            status=status.HTTP_400_BAD_REQUEST)
        return Response(ingest_batch(run, batch).model_dump())

    def get_authenticate_header(self, request):
        return BEARER_REALM
