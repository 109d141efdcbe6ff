"""Requests and tokens per minute, as an endpoint's quota counts them: a sliding window of the
last 60 seconds. A call reserves its estimated tokens before it is sent (the prompt's characters
/ 4 and the answer's max_tokens) and corrects them with the usage the answer reports, so that a
burst of calls cannot overrun the quota before the first answers come back.

One limiter per judge, used on the judge's event loop only (no locks): `acquire` waits, without
blocking the loop, until the window has room. The clock and the sleep are parameters so that
tests drive the window without waiting.
"""
import asyncio
import collections
import time
from collections.abc import Awaitable, Callable

WINDOW_S = 60.0


def estimate_tokens(prompt_chars: int, max_answer_tokens: int) -> int:
    """Tokens a call may use, before it is made: about 4 characters a token, and the longest answer."""
    return prompt_chars // 4 + 1 + max_answer_tokens


class Reservation:
    """A call's share of the window: its tokens are corrected once the answer says how many it used."""

    def __init__(self, at: float, tokens: int):
        self.at, self.tokens = at, tokens

    def settle(self, used_tokens: int) -> None:
        self.tokens = used_tokens


class RateLimiter:
    def __init__(self, requests_per_minute: int = 0, tokens_per_minute: int = 0,
                 clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep):
        self.requests_per_minute, self.tokens_per_minute = requests_per_minute, tokens_per_minute
        self.clock, self.sleep = clock, sleep
        self._window: collections.deque[Reservation] = collections.deque()

    async def acquire(self, tokens: int) -> Reservation:
        """Wait until one more request of `tokens` fits in the last minute, then take its place.
        A single call larger than the whole token quota goes alone into an empty window."""
        if not (self.requests_per_minute or self.tokens_per_minute):
            return Reservation(self.clock(), tokens)
        while True:
            now = self.clock()
            self._forget(now)
            wait = self._wait_s(now, tokens)
            if wait <= 0:
                reservation = Reservation(now, tokens)
                self._window.append(reservation)
                return reservation
            await self.sleep(wait)

    def _forget(self, now: float) -> None:
        while self._window and self._window[0].at <= now - WINDOW_S:
            self._window.popleft()

    def _wait_s(self, now: float, tokens: int) -> float:
        """0 when the request fits; else the seconds until the oldest reservation leaves the window
        (the earliest moment anything can change)."""
        if not self._window:
            return 0.0
        too_many = self.requests_per_minute and len(self._window) >= self.requests_per_minute
        used = sum(reservation.tokens for reservation in self._window)
        too_large = self.tokens_per_minute and used + tokens > self.tokens_per_minute
        if not (too_many or too_large):
            return 0.0
        return max(self._window[0].at + WINDOW_S - now, 1e-3)
