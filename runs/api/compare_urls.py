from django.urls import path

from runs.api.views.compare import CompareSamplesView, CompareView
from runs.api.views.evaluations import CompareEvalExampleView, CompareEvalExamplesView

urlpatterns = [
    path("", CompareView.as_view(), name="api-compare"),
    path("samples/", CompareSamplesView.as_view(), name="api-compare-samples"),
    path("eval-examples/", CompareEvalExamplesView.as_view(), name="api-compare-eval-examples"),
    path("eval-example/", CompareEvalExampleView.as_view(), name="api-compare-eval-example"),
]
