"""`GET /api/workers/`: the live Celery workers, their pools, devices and runs (runs/fleet/).

A broker that cannot be reached is a 503 that says so: the fleet is then unknown, which is not
the same as empty.
"""
from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from runs.fleet.asking import current_fleet
from runs.fleet.seen_by import visible_run_names
from runs.fleet.serializers import FleetSerializer

UNREACHABLE = inline_serializer("BrokerUnreachable", {"detail": serializers.CharField()})


class WorkersView(APIView):
    @extend_schema(
        responses={200: FleetSerializer,
                   503: OpenApiResponse(UNREACHABLE, description="The broker cannot be reached: `detail` says which "
                                                                 "and why.")},
        description="Each live Celery worker as it answered a broadcast inspection just now (or up to a few "
                    "seconds ago): the queues it consumes (pools), its devices (GPU names and memory, or CPU cores "
                    "and RAM), the runs it is busy with, and when it was last heard from. A worker that does not "
                    "answer within a second is not listed.")
    def get(self, request):
        fleet = current_fleet()
        if not fleet.reachable:
            return Response({"detail": fleet.broker_problem}, status=status.HTTP_503_SERVICE_UNAVAILABLE)
        context = {"run_names": visible_run_names(fleet, request.user)}
        return Response(FleetSerializer(fleet, context=context).data)
