"""What a judge measured of itself, reported by the trainer as judge/<name>/<key>: calls made to
the endpoint (not the cache's), how they went, their latency, tokens and estimated cost.
`failures` are calls that ended without an answer (timeouts included, also counted apart);
`unreadable` are answers the parser could not read; `retries` are the extra tries.
Updated on the judge's loop thread, taken from the trainer's: hence the lock."""
import threading

from worker.trainer.rewards.judges.client import Reply

COUNTS = ("calls", "failures", "timeouts", "retries", "unreadable", "cache_hits", "prompt_tokens", "answer_tokens")


class JudgeMetrics:
    def __init__(self, input_cost_per_million: float, output_cost_per_million: float):
        self.input_cost, self.output_cost = input_cost_per_million / 1e6, output_cost_per_million / 1e6
        self._lock = threading.Lock()
        self._cost_total = 0.0
        self._reset()

    def _reset(self) -> None:
        self._counts = dict.fromkeys(COUNTS, 0)
        self._latencies: list[float] = []
        self._cost = 0.0

    def record_call(self, reply: Reply) -> None:
        cost = reply.prompt_tokens * self.input_cost + reply.answer_tokens * self.output_cost
        with self._lock:
            counts = self._counts
            counts["calls"] += 1
            counts["failures"] += reply.error is not None
            counts["timeouts"] += reply.timed_out
            counts["retries"] += reply.retries
            counts["prompt_tokens"] += reply.prompt_tokens
            counts["answer_tokens"] += reply.answer_tokens
            self._latencies.append(reply.seconds)
            self._cost += cost
            self._cost_total += cost

    def record_cache_hit(self) -> None:
        with self._lock:
            self._counts["cache_hits"] += 1

    def record_unreadable(self) -> None:
        with self._lock:
            self._counts["unreadable"] += 1

    def take(self) -> dict[str, float]:
        """Since the last take: the counts, the cache's hit rate and the latency where anything was
        asked, this interval's cost and the cost since the judge was made."""
        with self._lock:
            taken = {key: float(value) for key, value in self._counts.items()}
            asked = self._counts["calls"] + self._counts["cache_hits"]
            if asked:
                taken["cache_hit_rate"] = self._counts["cache_hits"] / asked
            if self._latencies:
                taken["latency_s_mean"] = sum(self._latencies) / len(self._latencies)
                taken["latency_s_max"] = max(self._latencies)
            taken["cost_usd"], taken["cost_usd_total"] = self._cost, self._cost_total
            self._reset()
        return taken
