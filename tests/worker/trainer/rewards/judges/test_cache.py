"""The judge's answer cache: bounded, least recently used first out, one call for identical questions in flight."""
import asyncio

import pytest

from worker.trainer.rewards.judges.cache import AnswerCache, request_key


def test_the_key_covers_the_whole_request_whatever_its_order():
    body = {"model": "m", "messages": [{"role": "user", "content": "a"}]}
    assert request_key(body) == request_key(dict(reversed(body.items())))
    assert request_key(body) != request_key({**body, "model": "n"})


async def test_the_least_recently_used_answer_leaves_first():
    cache = AnswerCache(max_entries=2)
    asked = []

    async def ask(key):
        asked.append(key)
        return key.upper()

    for key in ("a", "b", "a", "c", "a", "b"):  # "b" left when "c" came: "a" was used since
        await cache.get_or_ask(key, lambda key=key: ask(key))
    assert asked == ["a", "b", "c", "b"] and len(cache) == 2 and cache.hits == 2


async def test_identical_questions_in_flight_share_one_call_and_its_failure():
    cache = AnswerCache(keep=lambda answer: answer != "bad")
    calls = 0

    async def ask():
        nonlocal calls
        calls += 1
        await asyncio.sleep(0.01)
        raise ConnectionError("gone")

    results = await asyncio.gather(*(cache.get_or_ask("k", ask) for _ in range(3)), return_exceptions=True)
    assert calls == 1 and all(isinstance(result, ConnectionError) for result in results)

    async def bad():
        return "bad"

    assert await cache.get_or_ask("k", bad) == ("bad", False)
    assert await cache.get_or_ask("k", bad) == ("bad", False)  # not kept: asked again
    assert len(cache) == 0


@pytest.mark.parametrize("entries", [1, 3])
async def test_the_cache_never_holds_more_than_its_bound(entries):
    cache = AnswerCache(max_entries=entries)

    async def ask():
        return 1

    for key in range(10):
        await cache.get_or_ask(str(key), ask)
    assert len(cache) == entries
