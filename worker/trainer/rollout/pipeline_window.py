"""What the rollout worker measured of itself between two training steps: which bound held its
submissions back, and how long its groups took to generate and to score.

The training loop reports it with each step (async/blocked_by_*, rollout/group_*_s) and the
in-flight controller reads it (rollout/inflight_control.py). The worker's thread counts, the
loop's thread takes: a few integers and sums under a lock, reset at each take.
"""
import threading
from dataclasses import dataclass

# The bounds of StalenessPolicy.submit_budget, as the metrics name them.
STALENESS, INFLIGHT_CAP, QUEUE = "staleness", "inflight_cap", "queue"


@dataclass(frozen=True)
class PipelineWindow:
    polls: int = 0                    # the worker's submit polls
    held_by_staleness: int = 0        # of which none could be submitted, and this bound was why
    held_by_inflight_cap: int = 0
    held_by_queue: int = 0
    groups_finished: int = 0          # groups scored and queued
    generation_s: float = 0.0         # their seconds from submission until the completions came back, summed
    scoring_s: float = 0.0            # and from then until scored (waiting for a scoring thread included)

    @property
    def group_generation_s(self) -> float | None:
        return self.generation_s / self.groups_finished if self.groups_finished else None

    @property
    def group_scoring_s(self) -> float | None:
        return self.scoring_s / self.groups_finished if self.groups_finished else None

    @property
    def group_latency_s(self) -> float | None:
        """A group's mean seconds from submission until queued: what Little's law multiplies."""
        return (self.generation_s + self.scoring_s) / self.groups_finished if self.groups_finished else None

    def share_held_by(self, bound: str) -> float:
        held = {STALENESS: self.held_by_staleness, INFLIGHT_CAP: self.held_by_inflight_cap, QUEUE: self.held_by_queue}
        return held[bound] / self.polls if self.polls else 0.0

    def metrics(self) -> dict[str, float]:
        """The step's metrics: the shares where the worker polled, the means where a group finished."""
        metrics: dict[str, float] = {}
        if self.polls:
            metrics.update({f"async/blocked_by_{bound}": self.share_held_by(bound)
                            for bound in (STALENESS, INFLIGHT_CAP, QUEUE)})
        if self.groups_finished:
            metrics["rollout/group_generation_s"] = self.generation_s / self.groups_finished
            metrics["rollout/group_scoring_s"] = self.scoring_s / self.groups_finished
        return metrics


class PipelineCounters:
    """Thread-safe: the worker's thread counts, the training loop takes (and so resets)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._reset()

    def polled(self, held_by: str | None) -> None:
        """One submit poll; `held_by`: the bound that left no room (None: there was room, or
        only the wave rule held it back)."""
        with self._lock:
            self._polls += 1
            if held_by == STALENESS:
                self._staleness += 1
            elif held_by == INFLIGHT_CAP:
                self._inflight_cap += 1
            elif held_by == QUEUE:
                self._queue += 1

    def group_finished(self, generation_s: float, scoring_s: float) -> None:
        with self._lock:
            self._groups += 1
            self._generation_s += generation_s
            self._scoring_s += scoring_s

    def take(self) -> PipelineWindow:
        """What was counted since the last take."""
        with self._lock:
            window = PipelineWindow(self._polls, self._staleness, self._inflight_cap, self._queue,
                                    self._groups, self._generation_s, self._scoring_s)
            self._reset()
        return window

    def _reset(self) -> None:
        self._polls = self._staleness = self._inflight_cap = self._queue = self._groups = 0
        self._generation_s = self._scoring_s = 0.0
