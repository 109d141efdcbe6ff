from django.urls import path

from runs.compare.views import CompareSamplesView, CompareView
from runs.evaluation.views import CompareEvalExamplesView, CompareEvalExampleView

urlpatterns = [
    path("", CompareView.as_view(), name="api-compare"),
    path("samples/", CompareSamplesView.as_view(), name="api-compare-samples"),
    path("eval-examples/", CompareEvalExamplesView.as_view(), name="api-compare-eval-examples"),
    path("eval-example/", CompareEvalExampleView.as_view(), name="api-compare-eval-example"),
]
