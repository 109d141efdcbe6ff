"""A judge as a reward: `Judge(name, params, endpoint)(prompts, completions, **columns)`.

Each completion (or, for `rank`, each group) becomes one chat request: the template filled in
(templates.py), the answer constrained where the server can (parsing.py), sent through the
judge's own client (client.py: concurrency, rate limits, retries, timeout), answered once per
identical request (cache.py). The calls run on one asyncio loop in a daemon thread per judge,
so the scorer threads that call a judge at once share its `max_concurrency` and wait only on
their own answers. Whatever goes wrong with one answer (the endpoint gone, a timeout, an answer
the parser cannot read) is that completion's None and a warning, never an exception.
"""
import asyncio
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass

import httpx

from worker.trainer.rewards.judges import parsing, templates
from worker.trainer.rewards.judges.cache import AnswerCache, request_key
from worker.trainer.rewards.judges.catalog import JudgeParams
from worker.trainer.rewards.judges.client import ChatClient, Reply
from worker.trainer.rewards.judges.metrics import JudgeMetrics
from worker.trainer.rollout.scoring import Explained

log = logging.getLogger(__name__)

RAW_CHARS = 200  # of an unreadable answer, in its warning
WARNINGS_PER_CALL = 5  # distinct problems warned about per call; the rest are counted


@dataclass(frozen=True)
class JudgeEndpoint:
    base_url: str  # OpenAI-style base, ending in /v1 (e.g. "http://127.0.0.1:8001/v1")
    model: str  # the model name the server knows
    api_key: str | None = None
    vllm: bool = False  # a vLLM server: constrain with its `structured_outputs`; else response_format

    def __repr__(self) -> str:  # never the key
        return f"JudgeEndpoint(base_url={self.base_url!r}, model={self.model!r}, vllm={self.vllm})"


class JudgeEndpointError(RuntimeError):
    """The endpoint refused the judge (its key, its model) or could not be reached: says which, with
    the server's own message."""


@dataclass
class JudgeAnswer:
    """One completion's judgement: the judge's raw answer, the reward parsed from it, or why there is none."""
    raw: str | None
    value: float | None
    error: str | None
    cached: bool
    seconds: float


class Judge:
    def __init__(self, name: str, params: JudgeParams, endpoint: JudgeEndpoint,
                 on_warning: Callable[[str], None] | None = None, transport: httpx.AsyncBaseTransport | None = None):
        self.name, self.params, self.endpoint = name, params, endpoint
        self.on_warning = on_warning or log.warning
        self.metrics = JudgeMetrics(params.input_cost_per_million, params.output_cost_per_million)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name=f"judge-{name}", daemon=True)
        self._thread.start()
        self._closed = False
        self._client: ChatClient = self._run(self._make_client(transport))
        self._cache: AnswerCache[Reply] = AnswerCache(keep=lambda reply: reply.error is None)

    async def _make_client(self, transport) -> ChatClient:
        return ChatClient(self.endpoint.base_url, self.endpoint.api_key, self.params.limits, transport=transport)

    def _run(self, coroutine):
        if self._closed:
            coroutine.close()
            raise RuntimeError(f"judge {self.name!r} is closed")
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result()

    # --- the reward -----------------------------------------------------------------------------

    def __call__(self, prompts, completions, **columns) -> Explained:
        """Rewards in 0..1 (None where the judge gave none), each with the judge's raw answer.
        `task_prompts`, where given, is what {prompt} shows (the task without its chat formatting)."""
        answers = self.judge_rows(prompts, completions, columns)
        return Explained([answer.value for answer in answers], [answer.raw for answer in answers])

    def judge_rows(self, prompts, completions, columns: dict[str, list]) -> list[JudgeAnswer]:
        """Each completion's answer, raw and parsed (the dry run shows both); warns about the failures."""
        columns = dict(columns)
        shown = columns.pop("task_prompts", None) or prompts
        if not len(prompts) == len(completions) == len(shown):
            raise ValueError(f"judge {self.name!r}: {len(prompts)} prompts, {len(shown)} task prompts and "
                             f"{len(completions)} completions; each completion needs its prompt")
        answers = self._run(self._judge(list(prompts), list(shown), list(completions), columns))
        self._warn(answers)
        return answers

    async def _judge(self, prompts, shown, completions, columns) -> list[JudgeAnswer]:
        if self.params.mode == "rank":
            groups = templates.groups_of(prompts)
            judged = await asyncio.gather(*(self._judge_group(shown, completions, columns, rows) for rows in groups))
            return [answer for group in judged for answer in group]
        return list(await asyncio.gather(*(self._judge_one(shown[row], completions[row], columns, row)
                                           for row in range(len(completions)))))

    async def _judge_one(self, prompt: str, completion: str, columns: dict, row: int) -> JudgeAnswer:
        rendered = templates.render_completion(self.params.template, prompt, completion, columns, row)
        if rendered.text is None:
            return JudgeAnswer(None, None, rendered.error, False, 0.0)
        reply, cached = await self._ask(self.request(rendered.text, self.params.max_answer_tokens))
        if reply.error or reply.raw is None:
            return JudgeAnswer(reply.raw, None, reply.error, cached, reply.seconds)
        parse = parsing.parse_score if self.params.mode == "score" else parsing.parse_choice
        try:
            return JudgeAnswer(reply.raw, parse(reply.raw, self.params), None, cached, reply.seconds)
        except parsing.UnreadableAnswer as exc:
            return self._unreadable(reply.raw, exc, cached, reply.seconds)

    async def _judge_group(self, shown, completions, columns, rows: range) -> list[JudgeAnswer]:
        size = len(rows)
        group = [completions[row] for row in rows]
        rendered = templates.render_group(self.params.template, shown[rows.start], group, columns, rows.start)
        if rendered.text is None:
            return [JudgeAnswer(None, None, rendered.error, False, 0.0)] * size
        body = self.request(rendered.text, parsing.rank_answer_tokens(self.params, size), size)
        reply, cached = await self._ask(body)
        if reply.error or reply.raw is None:
            return [JudgeAnswer(reply.raw, None, reply.error, cached, reply.seconds)] * size
        try:
            values = parsing.parse_rank(reply.raw, size)
        except parsing.UnreadableAnswer as exc:
            return [self._unreadable(reply.raw, exc, cached, reply.seconds)] * size
        return [JudgeAnswer(reply.raw, value, None, cached, reply.seconds) for value in values]

    def _unreadable(self, raw: str, exc: Exception, cached: bool, seconds: float) -> JudgeAnswer:
        if not cached:
            self.metrics.record_unreadable()
        shown = raw if len(raw) <= RAW_CHARS else raw[:RAW_CHARS] + "..."
        return JudgeAnswer(raw, None, f"unreadable answer ({exc}): {shown!r}", cached, seconds)

    # --- the request ----------------------------------------------------------------------------

    def request(self, question: str, max_tokens: int, group_size: int = 0) -> dict:
        """The chat completion request body for one question (also the cache's key)."""
        messages = [{"role": "user", "content": question}]
        if self.params.system_prompt:
            messages.insert(0, {"role": "system", "content": self.params.system_prompt})
        return {"model": self.endpoint.model, "messages": messages, "max_tokens": max_tokens,
                "temperature": self.params.temperature,
                **parsing.constraint(self.params, self.endpoint.vllm, group_size)}

    async def _ask(self, body: dict) -> tuple[Reply, bool]:
        async def call() -> Reply:
            reply = await self._client.post(body)
            self.metrics.record_call(reply)
            return reply

        key = request_key({"base_url": self.endpoint.base_url, **body})
        reply, cached = await self._cache.get_or_ask(key, call)
        if cached:
            self.metrics.record_cache_hit()
        return reply, cached

    def _warn(self, answers: list[JudgeAnswer]) -> None:
        """One warning per distinct problem in this call, with how many completions it cost."""
        problems: dict[str, int] = {}
        for answer in answers:
            if answer.error:
                problems[answer.error] = problems.get(answer.error, 0) + 1
        for error, count in list(problems.items())[:WARNINGS_PER_CALL]:
            self.on_warning(f"judge {self.name!r}: no reward for {count} of {len(answers)} completions: {error}")
        if len(problems) > WARNINGS_PER_CALL:
            self.on_warning(f"judge {self.name!r}: and {len(problems) - WARNINGS_PER_CALL} more problems in this "
                            "call (the dry run shows each answer)")

    # --- the rest -------------------------------------------------------------------------------

    def check(self) -> None:
        """One tiny call (an answer of 1 token) before the run: JudgeEndpointError when the endpoint
        refuses the key (401/403), does not know the model (404), or cannot be reached after retries."""
        body = {"model": self.endpoint.model, "messages": [{"role": "user", "content": "Answer OK."}],
                "max_tokens": 1, "temperature": 0.0}
        reply = self._run(self._client.post(body))
        if reply.error is None:
            return
        where = f"judge {self.name!r}: the endpoint at {self.endpoint.base_url}"
        if reply.status in (401, 403):
            raise JudgeEndpointError(f"{where} refused the API key ({reply.error})")
        if reply.status == 404:
            raise JudgeEndpointError(f"{where} does not know the model {self.endpoint.model!r} ({reply.error})")
        if reply.unreachable or reply.timed_out:
            raise JudgeEndpointError(f"{where} did not answer: {reply.error}")
        raise JudgeEndpointError(f"{where} refused a judge's request: {reply.error}")

    def take_metrics(self) -> dict[str, float]:
        return self.metrics.take()

    @property
    def most_in_flight(self) -> int:
        """The most calls this judge ever had in flight at once (never above limits.max_concurrency)."""
        return self._client.most_in_flight

    def close(self) -> None:
        if self._closed:
            return
        self._run(self._cancel_calls())
        self._run(self._client.aclose())
        self._closed = True
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()

    @staticmethod
    async def _cancel_calls() -> None:
        """Calls still in flight end cancelled, so that a thread waiting on one (a scorer's, at the
        run's end) gets an error instead of waiting forever on a loop that no longer runs."""
        pending = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)

    def __enter__(self) -> "Judge":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
