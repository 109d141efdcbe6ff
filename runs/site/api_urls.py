from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView
from rest_framework.routers import DefaultRouter

from runs.checkpoints.views.download import CheckpointDownloadView
from runs.checkpoints.views.upload import (
    CheckpointArchiveView,
    CheckpointFileUploadView,
    CheckpointUploadBeginView,
    CheckpointUploadCompleteView,
    CheckpointUploadStateView,
)
from runs.configs.views import TrainingConfigViewSet
from runs.datasets.views import DatasetViewSet
from runs.diagnosis.views import RunDiagnosisView
from runs.environments.views import EnvironmentViewSet
from runs.evaluation.views import EvalExamplesView, EvalExampleView, EvaluationOutcomesView, EvaluationsView
from runs.fleet.views import WorkersView
from runs.hub.views import CheckpointPushView, RunPushesView
from runs.ingest.views import RunEventsView
from runs.rewards.views import RewardFunctionViewSet
from runs.telemetry.sample_steps_view import SampleStepsView
from runs.training_runs.views.run_dataset import RunDatasetView
from runs.training_runs.views.run_secrets import RunSecretsView
from runs.training_runs.views.runs import RunViewSet

router = DefaultRouter()
router.register("datasets", DatasetViewSet, basename="dataset")
router.register("reward-functions", RewardFunctionViewSet, basename="rewardfunction")
router.register("configs", TrainingConfigViewSet, basename="trainingconfig")
router.register("environments", EnvironmentViewSet, basename="environment")
router.register("runs", RunViewSet, basename="run")

urlpatterns = [
    path("runs/<int:run_id>/events/", RunEventsView.as_view(), name="run-events"),
    path("runs/<int:run_id>/checkpoints/<int:checkpoint_id>/download/", CheckpointDownloadView.as_view(),
         name="run-checkpoint-download"),
    path("runs/<int:run_id>/checkpoints/<int:checkpoint_id>/push/", CheckpointPushView.as_view(),
         name="run-checkpoint-push"),
    path("runs/<int:run_id>/pushes/", RunPushesView.as_view(), name="run-pushes"),
    path("runs/<int:run_id>/dataset/", RunDatasetView.as_view(), name="run-dataset"),
    path("runs/<int:run_id>/secrets/", RunSecretsView.as_view(), name="run-secrets"),
    path("runs/<int:run_id>/uploads/<int:step>/", CheckpointUploadStateView.as_view(),
         name="run-checkpoint-upload"),
    path("runs/<int:run_id>/uploads/<int:step>/begin", CheckpointUploadBeginView.as_view(),
         name="run-checkpoint-upload-begin"),
    path("runs/<int:run_id>/uploads/<int:step>/files/<path:path>", CheckpointFileUploadView.as_view(),
         name="run-checkpoint-upload-file"),
    path("runs/<int:run_id>/uploads/<int:step>/complete", CheckpointUploadCompleteView.as_view(),
         name="run-checkpoint-upload-complete"),
    path("runs/<int:run_id>/uploads/<int:step>/archive", CheckpointArchiveView.as_view(),
         name="run-checkpoint-archive"),
    path("runs/<int:run_id>/diagnosis/", RunDiagnosisView.as_view(), name="run-diagnosis"),
    path("runs/<int:run_id>/sample-steps/", SampleStepsView.as_view(), name="run-sample-steps"),
    path("runs/<int:run_id>/evaluations/", EvaluationsView.as_view(), name="run-evaluations"),
    path("runs/<int:run_id>/evaluations/<int:step>/", EvaluationOutcomesView.as_view(), name="run-evaluation"),
    path("runs/<int:run_id>/eval-examples/", EvalExamplesView.as_view(), name="run-eval-examples"),
    path("runs/<int:run_id>/eval-examples/<int:index>/", EvalExampleView.as_view(), name="run-eval-example"),
    path("workers/", WorkersView.as_view(), name="workers"),
    path("compare/", include("runs.site.compare_api_urls")),
    path("schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
    *router.urls,
]
