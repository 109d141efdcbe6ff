"""The completions client: request shape, parsing, retries, and a dead server reported."""
import json

import httpx
import pytest

from worker.trainer.config import TrainingConfig
from worker.trainer.inference.completions_client import (CompletionsClient, ServerUnavailable, parse_choices,
                                                       sampling_params)

PAYLOAD = {"choices": [
    {"index": 1, "text": " b", "token_ids": [7], "logprobs": {"token_logprobs": [-0.5]}, "finish_reason": "length"},
    {"index": 0, "text": " a", "token_ids": [5, 6], "logprobs": {"token_logprobs": [-0.1, -0.2]},
     "finish_reason": "stop"},
]}


def client_with(handler, retries=2):
    return CompletionsClient("http://vllm", "policy", {"max_tokens": 8}, timeout_s=5, retries=retries,
                             backoff_s=0, transport=httpx.MockTransport(handler))


def test_choices_are_parsed_in_index_order():
    completions = parse_choices(PAYLOAD)
    assert [c.text for c in completions] == [" a", " b"]
    assert completions[0].token_ids == [5, 6] and completions[0].logprobs == [-0.1, -0.2]
    assert completions[1].finish_reason == "length"


def test_tokens_and_logprobs_must_agree():
    bad = {"choices": [{"index": 0, "text": "x", "token_ids": [1, 2], "logprobs": {"token_logprobs": [-1.0]}}]}
    with pytest.raises(ValueError, match="2 tokens but 1 log-probs"):
        parse_choices(bad)


async def test_request_asks_for_token_ids_and_sampled_logprobs():
    seen = []

    def handle(request):
        seen.append(json.loads(request.content))
        return httpx.Response(200, json=PAYLOAD)

    client = client_with(handle)
    await client.sample([1, 2, 3], n=2)
    await client.close()
    assert seen[0] == {"model": "policy", "prompt": [1, 2, 3], "n": 2, "logprobs": 0, "return_token_ids": True,
                       "max_tokens": 8}


async def test_transient_failures_are_retried():
    answers = [httpx.ConnectError("down"), httpx.Response(503), httpx.Response(200, json=PAYLOAD)]

    def handle(request):
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    client = client_with(handle)
    assert len(await client.sample([1], n=2)) == 2
    await client.close()


async def test_dead_server_is_reported_after_the_retries():
    def handle(request):
        raise httpx.ConnectError("connection refused")

    client = client_with(handle, retries=1)
    with pytest.raises(ServerUnavailable, match="2 tries.*connection refused"):
        await client.sample([1], n=2)
    await client.close()


async def test_refused_request_is_not_retried():
    calls = []

    def handle(request):
        calls.append(1)
        return httpx.Response(400, json={"error": "max_tokens too large"})

    client = client_with(handle)
    with pytest.raises(ValueError, match="max_tokens too large"):
        await client.sample([1], n=2)
    assert len(calls) == 1
    await client.close()


def test_sampling_params_follow_the_config():
    params = sampling_params(TrainingConfig(max_completion_length=64, temperature=0.7, top_k=20))
    assert params == {"max_tokens": 64, "temperature": 0.7, "top_p": 1.0, "repetition_penalty": 1.0, "top_k": 20}


def test_a_rollout_or_sync_error_caused_by_a_server_gone_is_told_apart():
    from worker.trainer.inference.completions_client import lost_its_server
    from worker.trainer.inference.server_api import ServerUnreachable

    def raised(cause):
        try:
            try:
                raise cause
            except Exception as exc:
                raise RuntimeError("rollout worker stopped") from exc
        except RuntimeError as outer:
            return outer

    assert lost_its_server(raised(ServerUnavailable("vLLM did not answer after 4 tries")))
    assert lost_its_server(ServerUnreachable("vLLM server unreachable during /pause"))
    assert not lost_its_server(raised(ValueError("vLLM refused the request: HTTP 400")))
