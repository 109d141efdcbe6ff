"""How long the judge's client backs off, and what it keeps of a server's refusal."""
import email.utils
import gzip
import json
import time

import httpx
import pytest

from worker.trainer.rewards.judges.catalog import JudgeLimits, JudgeParams
from worker.trainer.rewards.judges.client import (
    ANSWER_CHARS, BACKOFF_MAX_S, MAX_BODY_BYTES, RETRY_AFTER_MAX_S, ChatClient, backoff_s, retried, server_message,
)


def test_backoff_doubles_from_half_a_second_up_to_a_cap():
    assert [backoff_s(attempt) for attempt in range(4)] == [0.5, 1.0, 2.0, 4.0]
    assert backoff_s(20) == BACKOFF_MAX_S


def test_retry_after_in_seconds_or_as_a_date_is_honoured_and_capped():
    assert backoff_s(0, "3") == 3.0
    in_ten = email.utils.formatdate(time.time() + 10, usegmt=True)
    assert 5 < backoff_s(0, in_ten) <= 10
    assert backoff_s(0, "86400") == RETRY_AFTER_MAX_S
    assert backoff_s(2, "soon") == 2.0  # unreadable: the client's own backoff


@pytest.mark.parametrize("status, again", [(429, True), (500, True), (503, True), (408, True),
                                           (400, False), (401, False), (404, False), (422, False)])
def test_only_passing_failures_are_retried(status, again):
    assert retried(status) is again


@pytest.mark.parametrize("response, message", [
    (httpx.Response(401, json={"error": {"message": "Incorrect API key"}}), "Incorrect API key"),
    (httpx.Response(401, json={"error": "Unauthorized: asks the key"}), "Unauthorized: asks the key"),
    (httpx.Response(404, json={"message": "The model `x` does not exist."}), "The model `x` does not exist."),
    (httpx.Response(502, text="bad gateway\n"), "bad gateway"),
    (httpx.Response(503), "Service Unavailable"),
])
def test_a_refusal_keeps_the_servers_own_reason(response, message):
    assert server_message(response) == message


def test_a_long_refusal_is_shortened():
    assert server_message(httpx.Response(500, text="x" * 5000)).endswith("...")
    assert len(server_message(httpx.Response(500, text="x" * 5000))) < 400


def client_answering(handler) -> ChatClient:
    return ChatClient("http://judge.test/v1", None, JudgeLimits(max_retries=0), transport=httpx.MockTransport(handler))


async def test_an_endless_answer_is_not_read_past_its_bound():
    """The endpoint is the user's: a body that never ends costs the worker a bounded buffer, not its memory."""
    async def chunks():
        for _ in range(MAX_BODY_BYTES // 65536 + 100):
            yield b"x" * 65536

    def endless(request):
        return httpx.Response(200, content=chunks())

    client = client_answering(endless)
    reply = await client.post({"messages": [{"role": "user", "content": "rate"}], "max_tokens": 4})
    await client.aclose()
    assert reply.raw is None and reply.status == 200 and "is over 1024 KiB" in reply.error


async def test_a_compressed_answer_is_read_and_uncompressed_ones_are_asked_for():
    """A hosted endpoint or a proxy may gzip its answer all the same: it is read once, as text."""
    asked = []

    def gzipped(request):
        asked.append(request.headers.get("Accept-Encoding"))
        body = gzip.compress(json.dumps({"choices": [{"message": {"content": "7"}}]}).encode())
        return httpx.Response(200, content=body, headers={"Content-Encoding": "gzip",
                                                          "Content-Type": "application/json"})

    client = client_answering(gzipped)
    reply = await client.post({"messages": [{"role": "user", "content": "rate"}], "max_tokens": 4})
    await client.aclose()
    assert (reply.error, reply.raw, asked) == (None, "7", ["identity"])


async def test_a_long_answer_is_kept_up_to_its_bound():
    answer = "7" + " really" * 10_000

    client = client_answering(lambda request: httpx.Response(200, json={"choices": [{"message": {"content": answer}}]}))
    reply = await client.post({"messages": [{"role": "user", "content": "rate"}], "max_tokens": 4})
    await client.aclose()
    assert reply.error is None and reply.raw == answer[:ANSWER_CHARS] + "..."


def test_a_label_is_as_short_as_an_answer():
    with pytest.raises(ValueError, match="a label is 1 to 200 characters"):
        JudgeParams(template="{completion}", model="m", mode="choice", labels={"yes": 1.0, "n" * 201: 0.0})
