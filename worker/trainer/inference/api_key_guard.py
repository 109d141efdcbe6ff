"""The run's API key on every path of vLLM's server but /health (`vllm serve --middleware`).

vLLM's own --api-key (or VLLM_API_KEY) guards only /v1, /v2, /inference and /cohere (vLLM 0.32,
entrypoints/serve/middleware/authenticate.py); the development endpoints weight sync needs
(/pause, /resume, /collective_rpc, /update_weights, /reset_prefix_cache, ...) would stay open
to any process on the host. This pure ASGI middleware asks `Authorization: Bearer <key>` of
every request but GET /health, the key read from VLLM_API_KEY, which launch.py sets to a key
made for the run. vLLM imports it by name in its API server, so it imports nothing of ours.
"""
import hmac
import json
import os

KEY_VARIABLE = "VLLM_API_KEY"
OPEN_PATHS = frozenset({"/health"})  # readiness probes: says nothing, changes nothing
REFUSAL = json.dumps({"error": "Unauthorized: this server asks the run's API key (Authorization: Bearer ...) "
                               "on every path but /health"}).encode()


def bearer(api_key: str | None) -> dict[str, str]:
    """The header a client of a guarded server sends ({} for an open server)."""
    return {"Authorization": f"Bearer {api_key}"} if api_key else {}


class ApiKeyGuard:
    def __init__(self, app, key: str | None = None):
        self.app = app
        key = key if key is not None else os.environ.get(KEY_VARIABLE, "")
        if not key:  # started with the guard but no key: refuse to serve rather than serve openly
            raise RuntimeError(f"{KEY_VARIABLE} is not set: the API key guard has no key to ask for")
        self.expected = f"Bearer {key}".encode()

    async def __call__(self, scope, receive, send):
        if scope["type"] not in ("http", "websocket") or self._allowed(scope):
            await self.app(scope, receive, send)
            return
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        await send({"type": "http.response.start", "status": 401,
                    "headers": [(b"content-type", b"application/json"), (b"www-authenticate", b"Bearer")]})
        await send({"type": "http.response.body", "body": REFUSAL})

    def _allowed(self, scope) -> bool:
        path = scope["path"].removeprefix(scope.get("root_path", ""))
        if path in OPEN_PATHS and scope.get("method") in ("GET", "HEAD"):
            return True
        given = dict(scope.get("headers") or []).get(b"authorization", b"")
        return hmac.compare_digest(given, self.expected)
