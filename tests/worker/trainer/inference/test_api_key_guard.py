"""The middleware vLLM's server runs with: every path but GET /health asks for the run's key."""
import asyncio

import httpx
import pytest

from worker.trainer.inference.api_key_guard import ApiKeyGuard, bearer

KEY = "k" * 43


async def app(scope, receive, send):
    """Stands for vLLM's app: answers 200 to whatever reaches it."""
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"reached"})


def call(method: str, path: str, headers: dict | None = None) -> httpx.Response:
    async def go():
        transport = httpx.ASGITransport(app=ApiKeyGuard(app, key=KEY))
        async with httpx.AsyncClient(transport=transport, base_url="http://vllm") as client:
            return await client.request(method, path, headers=headers)

    return asyncio.run(go())


@pytest.mark.parametrize("method, path", [("POST", "/pause"), ("POST", "/collective_rpc"), ("GET", "/metrics"),
                                          ("POST", "/v1/completions"), ("POST", "/health"), ("GET", "//pause")])
def test_a_request_without_the_key_is_refused(method, path):
    response = call(method, path)
    assert response.status_code == 401 and "API key" in response.json()["error"]


@pytest.mark.parametrize("headers", [{"Authorization": "Bearer wrong"}, {"Authorization": KEY},
                                     {"Authorization": f"Basic {KEY}"}])
def test_a_wrong_key_is_refused(headers):
    assert call("POST", "/reset_prefix_cache", headers).status_code == 401


def test_the_key_opens_every_path_and_health_needs_none():
    assert call("POST", "/pause", bearer(KEY)).text == "reached"
    assert call("GET", "/health").text == "reached"


def test_a_guard_started_without_a_key_refuses_to_serve(monkeypatch):
    monkeypatch.delenv("VLLM_API_KEY", raising=False)
    with pytest.raises(RuntimeError, match="VLLM_API_KEY is not set"):
        ApiKeyGuard(app)
