"""One ASGI application for HTTP (pages, API, static files) and websockets."""
import os
import warnings

from django.core.asgi import get_asgi_application

# WhiteNoise serves static files with a synchronous iterator; under ASGI Django warns
# about it on every file. The files are small and cached, so the warning is noise.
warnings.filterwarnings("ignore", message="StreamingHttpResponse must consume synchronous iterators")

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "controlplane.settings")
http_application = get_asgi_application()  # sets Django up before the imports below

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402

from runs.site.request_guard import RequestGuard  # noqa: E402
from runs.live.routing import websocket_urlpatterns  # noqa: E402

application = ProtocolTypeRouter({
    # No body is read before the sender has shown who it is and the route's limit holds.
    "http": RequestGuard(http_application),
    # types-channels wants routes of a URLPattern subclass only its stubs have; path() makes Django's.
    "websocket": AllowedHostsOriginValidator(AuthMiddlewareStack(URLRouter(
        websocket_urlpatterns))),  # type: ignore[arg-type]
})
