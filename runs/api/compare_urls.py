from django.urls import path

from runs.api.views.compare import CompareSamplesView, CompareView

urlpatterns = [
    path("", CompareView.as_view(), name="api-compare"),
    path("samples/", CompareSamplesView.as_view(), name="api-compare-samples"),
]
