"""Requests and tokens per minute over a sliding window, driven by a clock the test moves."""
import pytest

from worker.trainer.rewards.judges.limits import RateLimiter, estimate_tokens


class FakeTime:
    """A clock that a sleep moves forward: the limiter waits without the test waiting."""

    def __init__(self):
        self.now, self.sleeps = 1000.0, []

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def window_counts(times: list[float]) -> int:
    """The most requests started within any 60 s."""
    return max(sum(1 for other in times if start <= other < start + 60) for start in times)


async def test_requests_per_minute_are_never_exceeded_in_any_minute():
    time = FakeTime()
    limiter = RateLimiter(requests_per_minute=3, clock=time.clock, sleep=time.sleep)
    started = []
    for _ in range(10):
        await limiter.acquire(1)
        started.append(time.now)
    assert window_counts(started) == 3
    assert started[:3] == [1000.0] * 3 and started[3] == pytest.approx(1060.0)  # waited for the first to leave


async def test_tokens_per_minute_count_the_estimate_until_the_usage_corrects_it():
    time = FakeTime()
    limiter = RateLimiter(tokens_per_minute=100, clock=time.clock, sleep=time.sleep)
    first = await limiter.acquire(60)
    first.settle(10)  # the answer used fewer tokens than estimated: room for the next
    await limiter.acquire(60)
    assert time.sleeps == []
    await limiter.acquire(60)  # 70 used: this one waits for the window
    assert time.sleeps and time.now == pytest.approx(1060.0)


async def test_a_call_larger_than_the_whole_quota_goes_alone():
    time = FakeTime()
    limiter = RateLimiter(tokens_per_minute=100, clock=time.clock, sleep=time.sleep)
    await limiter.acquire(500)
    assert time.sleeps == []
    await limiter.acquire(1)
    assert time.now == pytest.approx(1060.0)


async def test_no_limits_never_wait():
    time = FakeTime()
    limiter = RateLimiter(clock=time.clock, sleep=time.sleep)
    for _ in range(1000):
        await limiter.acquire(10_000)
    assert time.sleeps == []


def test_tokens_are_estimated_from_characters_and_the_longest_answer():
    assert estimate_tokens(400, 16) == 117
