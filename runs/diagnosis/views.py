"""`GET /api/runs/<id>/diagnosis/`: where the run's step time goes, what holds it back, and the
knob that moves it (runs/diagnosis/). The run page's panel and `grpo runs diagnose` read it."""
from drf_spectacular.utils import extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView

from runs.diagnosis.reading import diagnosis_of
from runs.diagnosis.serializers import DiagnosisSchema
from runs.training_runs.models import Run


class RunDiagnosisView(APIView):
    @extend_schema(responses=DiagnosisSchema, operation_id="run_diagnosis",
                   description="The recent steps' time split (waiting for rollouts, training, weight sync, "
                               "evaluation), throughput, staleness and in-flight queue; the bottleneck in a "
                               "sentence; and knob changes that move it, each one the run's config validation "
                               "takes. A run with too few steps (any state, queued included) answers status too_short.")
    def get(self, request, run_id: int):
        return Response(diagnosis_of(Run.objects.visible_or_404(request.user, run_id)).as_dict())
