"""Identical questions judged once: an LRU of answers keyed on a hash of the whole request body
(model, system prompt, rendered template, constraint, sampling), so that any difference in
prompt, completion, column or template asks again. Questions asked again while the first is in
flight wait for its answer instead of calling twice (a group often holds identical completions).

Only answers are kept: a call that failed (timeout, lost endpoint) is asked again next time.
Used on the judge's event loop only (no locks).
"""
import asyncio
import collections
import hashlib
import json
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

MAX_ENTRIES = 100_000

T = TypeVar("T")


def request_key(body: dict) -> str:
    return hashlib.sha256(json.dumps(body, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


class AnswerCache(Generic[T]):
    def __init__(self, max_entries: int = MAX_ENTRIES, keep: Callable[[T], bool] = lambda _: True):
        self.max_entries, self.keep = max_entries, keep
        self._answers: collections.OrderedDict[str, T] = collections.OrderedDict()
        self._in_flight: dict[str, asyncio.Future] = {}
        self.hits = 0

    def __len__(self) -> int:
        return len(self._answers)

    async def get_or_ask(self, key: str, ask: Callable[[], Awaitable[T]]) -> tuple[T, bool]:
        """The answer for `key` and whether it came from the cache (or from a call in flight)."""
        if key in self._answers:
            self._answers.move_to_end(key)
            self.hits += 1
            return self._answers[key], True
        if key in self._in_flight:
            self.hits += 1
            return await asyncio.shield(self._in_flight[key]), True
        future = asyncio.get_running_loop().create_future()
        self._in_flight[key] = future
        try:
            answer = await ask()
        except asyncio.CancelledError:
            future.cancel()
            raise
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # retrieved: no "never retrieved" warning when no one shared it
            raise
        finally:
            del self._in_flight[key]
        future.set_result(answer)
        if self.keep(answer):
            self._store(key, answer)
        return answer, False

    def _store(self, key: str, answer: T) -> None:
        self._answers[key] = answer
        if len(self._answers) > self.max_entries:
            self._answers.popitem(last=False)
