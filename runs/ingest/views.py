"""`POST /api/runs/<id>/events/`: where trainers and supervisors report, with the run's own token."""
from drf_spectacular.utils import extend_schema, inline_serializer
from pydantic import ValidationError as SchemaError
from rest_framework import serializers, status
from rest_framework.exceptions import AuthenticationFailed, ParseError
from rest_framework.response import Response
from rest_framework.views import APIView

from runs.accounts.run_tokens import BEARER_REALM, WRONG_TOKEN_FOR_EVENTS, run_of_token
from runs.ingest.batches import ingest_batch
from runs.training_runs.models import Run
from runs.web.strict_bodies import pydantic_body, schema_problems
from worker.trainer.events import EventBatch


def authorized_run(request, run_id: int) -> Run:
    """The run whose token this is, for the ingest: a 401 otherwise."""
    run = run_of_token(request, run_id)
    if run is None:
        raise AuthenticationFailed(WRONG_TOKEN_FOR_EVENTS)
    return run


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
