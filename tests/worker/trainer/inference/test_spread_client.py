"""Rollouts over several vLLM servers (inference_machines): each request to the least busy one."""
import asyncio

import httpx

from worker.trainer.inference.completions_client import CompletionsClient
from worker.trainer.inference.spread_client import SpreadClient

ANSWER = {"choices": [{"index": 0, "text": "x", "token_ids": [1], "logprobs": {"token_logprobs": [-0.5]}}]}


def test_requests_in_flight_spread_evenly_and_each_server_is_asked():
    seen: list[str] = []
    release = asyncio.Event()

    async def handle(request):
        seen.append(request.url.host)
        await release.wait()
        return httpx.Response(200, json=ANSWER)

    async def go():
        transport = httpx.MockTransport(handle)
        clients = [CompletionsClient(f"http://vllm-{index}", "policy", {}, timeout_s=5, transport=transport)
                   for index in (1, 2, 3)]
        spread = SpreadClient(clients)
        pending = [asyncio.create_task(spread.sample([1, 2], n=4)) for _ in range(6)]
        while len(seen) < 6:
            await asyncio.sleep(0.01)
        in_flight = list(spread.in_flight)
        release.set()
        results = await asyncio.gather(*pending)
        await spread.close()
        return in_flight, results, spread

    in_flight, results, spread = asyncio.run(go())
    assert in_flight == [2, 2, 2]
    assert sorted(seen) == ["vllm-1", "vllm-1", "vllm-2", "vllm-2", "vllm-3", "vllm-3"]
    assert spread.in_flight == [0, 0, 0] and spread.answered == [2, 2, 2]
    assert all(completions[0].text == "x" for completions in results)


def test_a_server_that_answers_first_takes_the_next_request():
    async def go():
        transport = httpx.MockTransport(lambda request: httpx.Response(200, json=ANSWER))
        spread = SpreadClient([CompletionsClient(f"http://vllm-{index}", "policy", {}, timeout_s=5,
                                                 transport=transport) for index in (1, 2)])
        for _ in range(3):  # one at a time: nothing in flight, so the first each time
            await spread.sample([1], n=1)
        await spread.close()
        return spread.answered

    assert asyncio.run(go()) == [3, 0]
