"""Pushing a checkpoint to the Hugging Face Hub, and the pushes of a run.

`POST /api/runs/<id>/checkpoints/<checkpoint id>/push/` checks the request and that the part
can be read here, records the push, queues it and answers 202 at once; a consumer of the control
plane's queue does it (runs/hub/push.py). `GET /api/runs/<id>/pushes/` is where its
progress shows.
"""
from django.http import Http404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from runs.artifacts.export import NoSuchPart
from runs.artifacts.stores import StoreUnavailable
from runs.checkpoints.models.checkpoint import Checkpoint
from runs.checkpoints.responses import files_or_404, store_unavailable
from runs.hub.push import PushRequest, start_push
from runs.hub.serializers import HubPushSerializer, PushToHubSerializer
from runs.training_runs.models import Run
from runs.web.errors import TOO_MUCH_UNFINISHED

PUSH_DESCRIPTION = (
    "Starts pushing a part of the checkpoint to a Hugging Face Hub repository (the Hub this control plane is "
    "configured for, HF_HUB_ENDPOINT), creating the repository if needed, and answers 202 with the push at once. "
    "The push runs in the background, on the control plane's queue: poll GET /api/runs/{run_id}/pushes/ for its "
    "progress (files_done of files_total, bytes_done of bytes_total) until its status is pushed (with commit_url) or "
    "failed "
    "(detail says why: a refused token, an unreachable Hub, ...). The token is used for this push only: never "
    "stored or returned, it reaches the queue's consumer encrypted and unreadable after a day.")


def visible_checkpoint(user, run_id: int, checkpoint_id: int) -> Checkpoint:
    """The checkpoint if its run is one `user` may see; a 404 otherwise, also for someone else's run."""
    run = Run.objects.visible_to(user).filter(pk=run_id).first()
    checkpoint = run.checkpoints.select_related("run").filter(pk=checkpoint_id).first() if run else None
    if checkpoint is None:
        raise Http404("no such checkpoint")
    return checkpoint


class CheckpointPushView(APIView):
    @extend_schema(
        request=PushToHubSerializer, description=PUSH_DESCRIPTION,
        responses={202: OpenApiResponse(HubPushSerializer, description="The push, queued (status pushing)."),
                   400: OpenApiResponse(description="A malformed repo_id, an unknown part, or no token; "
                                                    "the answer names the field."),
                   404: OpenApiResponse(description="No such run or checkpoint, the checkpoint has no such part, "
                                                    "or its files are not readable here."),
                   429: OpenApiResponse(OpenApiTypes.OBJECT, description=TOO_MUCH_UNFINISHED),
                   503: OpenApiResponse(description="The artifact store (a bucket) could not be reached.")})
    def post(self, request, run_id: int, checkpoint_id: int):
        checkpoint = visible_checkpoint(request.user, run_id, checkpoint_id)
        body = PushToHubSerializer(data=request.data, context={"request": request})
        body.is_valid(raise_exception=True)
        try:
            push = start_push(checkpoint, files_or_404(checkpoint), PushRequest(**body.validated_data), request.user)
        except NoSuchPart as exc:
            raise Http404(str(exc)) from None
        except StoreUnavailable as exc:
            return store_unavailable(exc)
        return Response(HubPushSerializer(push).data, status=status.HTTP_202_ACCEPTED)


class RunPushesView(APIView):
    @extend_schema(responses=HubPushSerializer(many=True),
                   description="The run's pushes to the Hub, newest first, with their status and progress.")
    def get(self, request, run_id: int):
        run = Run.objects.visible_or_404(request.user, run_id)
        pushes = run.hub_pushes.select_related("checkpoint", "requested_by")
        return Response(HubPushSerializer(pushes, many=True).data)
