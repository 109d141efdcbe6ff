"""Every client the trainer has of vLLM sends the server's key: completions (rollouts,
evaluations, episodes), the development endpoints (pauses, reloads, weight transfer), the
served model's name and readiness. Against a server that records what it was sent."""
import asyncio
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

KEY = "the-runs-key"


class Recording(BaseHTTPRequestHandler):
    seen: list = []

    def _answer(self):
        self.seen.append((self.path.split("?")[0], self.headers.get("Authorization")))
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        body = {"/v1/completions": {"choices": [{"index": 0, "text": "a", "token_ids": [5],
                                                 "logprobs": {"token_logprobs": [-0.1]}}]},
                "/v1/models": {"data": [{"id": "policy"}]}, "/get_world_size": {"world_size": 1}}
        payload = json.dumps(body.get(self.path.split("?")[0], {})).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = do_POST = _answer

    def log_message(self, *args):
        pass


@pytest.fixture
def vllm():
    handler = type("Recorder", (Recording,), {"seen": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}", handler.seen
    server.shutdown()


def test_completions_carry_the_key(vllm):
    from worker.trainer.inference.completions_client import CompletionsClient

    url, seen = vllm

    async def sample():
        client = CompletionsClient(url, "policy", {"max_tokens": 1}, timeout_s=5, api_key=KEY)
        await client.sample([1], n=1)
        await client.close()

    asyncio.run(sample())
    assert seen == [("/v1/completions", f"Bearer {KEY}")]


@pytest.mark.parametrize("backend", ["filesystem", "lora_adapter", "nccl"])
def test_each_weight_syncs_own_client_carries_the_key(vllm, tmp_path, backend):
    pytest.importorskip("torch")
    from worker.trainer.weight_sync.backends import make_weight_sync

    url, seen = vllm
    sync = make_weight_sync(backend, url, tmp_path, api_key=KEY)
    sync.client.reset_prefix_cache()
    sync.client.world_size()
    assert seen == [("/reset_prefix_cache", f"Bearer {KEY}"), ("/get_world_size", f"Bearer {KEY}")]


def test_readiness_and_the_served_name_carry_the_key(vllm):
    pytest.importorskip("torch")
    from worker.trainer.inference.readiness import wait_for_health
    from worker.trainer.startup.server import served_name_of

    url, seen = vllm
    wait_for_health(url, timeout_s=5, api_key=KEY)
    assert served_name_of(url, KEY) == "policy"
    assert seen == [("/health", f"Bearer {KEY}"), ("/v1/models", f"Bearer {KEY}")]
