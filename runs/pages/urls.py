from django.urls import include, path

from runs.pages import home, workers

urlpatterns = [
    path("", home.home, name="home"),
    path("", include("runs.pages.library.urls")),
    path("", include("runs.pages.watch.urls")),
    path("", include("runs.pages.compare.urls")),
    *workers.urlpatterns,
]
