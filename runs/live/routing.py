from django.urls import path

from runs.live.consumers import RunConsumer

websocket_urlpatterns = [
    # Channels routes an ASGI app with Django's path(), whose stubs take views only.
    path("ws/runs/<int:run_id>/", RunConsumer.as_asgi()),  # type: ignore[arg-type]
]
