"""One judge's HTTP client for an OpenAI-compatible `POST /chat/completions`: at most
`max_concurrency` calls in flight, the rate limits, retries with backoff on what passes (429, 5xx,
a lost connection), and a timeout on each call. It never raises for the network: every call
ends in a Reply, with the answer or the reason there is none, so that a judge that goes away
slows the run's judging rather than failing its step.
"""
import asyncio
import email.utils
import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import httpx

from worker.trainer.rewards.judges.catalog import JudgeLimits
from worker.trainer.rewards.judges.limits import RateLimiter, estimate_tokens

BACKOFF_BASE_S = 0.5
BACKOFF_MAX_S = 30.0
RETRY_AFTER_MAX_S = 120.0
MESSAGE_CHARS = 300
# The endpoint is the user's: a body past this is not read on (a verdict of max_answer_tokens is far
# smaller), and an answer's text is kept up to ANSWER_CHARS (it travels in samples and dry runs).
MAX_BODY_BYTES = 1 << 20
ANSWER_CHARS = 16_000
RETRIED_STATUSES = frozenset({408, 409, 429})


@dataclass
class Reply:
    """What one call came to: the answer's text (raw), or why there is none (error)."""
    raw: str | None = None
    error: str | None = None
    status: int | None = None  # the last HTTP status, None when no answer came back at all
    prompt_tokens: int = 0
    answer_tokens: int = 0
    seconds: float = 0.0
    retries: int = 0
    timed_out: bool = False
    unreachable: bool = False


def retried(status: int) -> bool:
    return status in RETRIED_STATUSES or status >= 500


def backoff_s(attempt: int, retry_after: str | None = None) -> float:
    """Seconds to wait before retry `attempt` (0 for the first): the server's Retry-After where it
    gives one (seconds or an HTTP date, capped), else exponential from BACKOFF_BASE_S."""
    if retry_after:
        seconds = retry_after_s(retry_after)
        if seconds is not None:
            return min(max(seconds, 0.0), RETRY_AFTER_MAX_S)
    return min(BACKOFF_BASE_S * 2 ** attempt, BACKOFF_MAX_S)


def retry_after_s(header: str) -> float | None:
    """Retry-After in seconds from now: a number of seconds or an HTTP date; None when unreadable."""
    try:
        return float(header)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(header)
    except (TypeError, ValueError, IndexError):
        return None
    return when.timestamp() - time.time() if when.tzinfo else None


def server_message(response: httpx.Response) -> str:
    """The reason a server gives for an error (OpenAI's {"error": {"message"}}, vLLM's, or its
    text), shortened for a log line."""
    try:
        body = response.json()
    except ValueError:
        body = None
    message = None
    if isinstance(body, dict):
        error = body.get("error", body.get("detail", body.get("message")))
        message = error.get("message") if isinstance(error, dict) else error
    text = str(message) if message else response.text.strip() or response.reason_phrase
    return text if len(text) <= MESSAGE_CHARS else text[:MESSAGE_CHARS] + "..."


class ChatClient:
    """Make it on the loop it is used on (its semaphore and limiter belong to that loop)."""

    def __init__(self, base_url: str, api_key: str | None, limits: JudgeLimits,
                 transport: httpx.AsyncBaseTransport | None = None,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep):
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.limits, self.sleep = limits, sleep
        # Uncompressed answers: the body limit then bounds what is read, not a decompressed multiple of it.
        headers = {"Accept-Encoding": "identity", **({"Authorization": f"Bearer {api_key}"} if api_key else {})}
        self._http = httpx.AsyncClient(headers=headers, timeout=limits.timeout_s, transport=transport)
        self._slots = asyncio.Semaphore(limits.max_concurrency)
        self.limiter = RateLimiter(limits.requests_per_minute, limits.tokens_per_minute, sleep=sleep)
        self.in_flight = self.most_in_flight = 0

    async def post(self, body: dict) -> Reply:
        """One call, retried as the limits allow."""
        prompt_chars = sum(len(message.get("content") or "") for message in body.get("messages", []))
        tokens = estimate_tokens(prompt_chars, body.get("max_tokens") or 0)
        async with self._slots:
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
            try:
                return await self._attempts(body, tokens)
            finally:
                self.in_flight -= 1

    async def _attempts(self, body: dict, tokens: int) -> Reply:
        attempt = 0
        while True:
            reservation = await self.limiter.acquire(tokens)
            reply, retry_after = await self._attempt(body)
            reservation.settle(reply.prompt_tokens + reply.answer_tokens or tokens)
            reply.retries = attempt
            again = reply.unreachable or (reply.status is not None and retried(reply.status))
            if not again or reply.timed_out or attempt >= self.limits.max_retries:
                if again:
                    reply.error = f"{reply.error} (after {attempt + 1} tries)"
                return reply
            await self.sleep(backoff_s(attempt, retry_after))
            attempt += 1

    async def _attempt(self, body: dict) -> tuple[Reply, str | None]:
        started = time.perf_counter()
        try:
            response = await asyncio.wait_for(self._bounded_post(body), self.limits.timeout_s)
        except BodyTooLarge as exc:
            return Reply(error=str(exc), status=exc.status, seconds=time.perf_counter() - started), None
        except (TimeoutError, httpx.TimeoutException):
            return Reply(error=f"no answer within {self.limits.timeout_s:g} s", timed_out=True,
                         seconds=time.perf_counter() - started), None
        except httpx.TransportError as exc:
            return Reply(error=f"the endpoint at {self.url} could not be reached ({type(exc).__name__}: {exc})",
                         unreachable=True, seconds=time.perf_counter() - started), None
        seconds = time.perf_counter() - started
        if response.status_code != 200:
            return (Reply(error=f"HTTP {response.status_code}: {server_message(response)}",
                          status=response.status_code, seconds=seconds),
                    response.headers.get("retry-after"))
        return read_answer(response, seconds), None

    async def _bounded_post(self, body: dict) -> httpx.Response:
        """The response, its body read up to MAX_BODY_BYTES (BodyTooLarge past it)."""
        async with self._http.stream("POST", self.url, json=body) as response:
            content = bytearray()
            async for chunk in response.aiter_bytes():
                content += chunk
                if len(content) > MAX_BODY_BYTES:
                    raise BodyTooLarge(response.status_code)
        # The chunks came decoded: the rebuilt response must not say they are still compressed.
        headers = [(name, value) for name, value in response.headers.items()
                   if name.lower() not in ("content-encoding", "content-length")]
        return httpx.Response(response.status_code, headers=headers, content=bytes(content),
                              request=response.request)

    async def aclose(self) -> None:
        await self._http.aclose()


class BodyTooLarge(Exception):
    def __init__(self, status: int):
        self.status = status
        super().__init__(f"the endpoint's answer (HTTP {status}) is over {MAX_BODY_BYTES // 1024} KiB: not read on")


def read_answer(response: httpx.Response, seconds: float) -> Reply:
    """The first choice's text and the usage, from a 200 answer."""
    try:
        body = response.json()
        usage = body.get("usage") or {}
        content = body["choices"][0]["message"].get("content")
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        return Reply(error=f"the endpoint's answer is not a chat completion: {response.text[:MESSAGE_CHARS]!r}",
                     status=200, seconds=seconds)
    if isinstance(content, str) and len(content) > ANSWER_CHARS:
        content = content[:ANSWER_CHARS] + "..."
    # Text or nothing: content of another shape (a list of parts, say) is no answer the parsers read.
    reply = Reply(raw=content if isinstance(content, str) else None, status=200, seconds=seconds,
                  prompt_tokens=int(usage.get("prompt_tokens") or 0),
                  answer_tokens=int(usage.get("completion_tokens") or 0))
    if reply.raw is None:
        reply.error = f"the answer has no text: {json.dumps(body['choices'][0])[:MESSAGE_CHARS]}"
    return reply
