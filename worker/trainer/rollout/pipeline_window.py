"""What the rollout worker measured of itself between two training steps: which bound held its
submissions back, and how long its groups took to generate and to score.

The training loop reports it with each step (async/blocked_by_*, async/paused_share,
rollout/group_*_s) and the in-flight controller reads it (rollout/inflight_control.py). The
worker's thread counts, the loop's thread takes: a few integers and sums under a lock, reset at
each take. Polls while generation is paused (cpu_sharing take_turns) are counted apart and left
out of the blocked_by_* shares: the pause, not a bound, held generation back then.
Details: docs/capabilities/diagnosis.md#what-it-looks-at.
"""
import threading
from dataclasses import dataclass

from worker.trainer.metric_names import (ASYNC_BLOCKED_BY, ASYNC_PAUSED_SHARE, ROLLOUT_GROUP_GENERATION_S,
                                          ROLLOUT_GROUP_SCORING_S)

# The bounds of StalenessPolicy.submit_budget, as the metrics name them.
STALENESS, INFLIGHT_CAP, QUEUE = "staleness", "inflight_cap", "queue"


@dataclass(frozen=True)
class PipelineWindow:
    polls: int = 0                    # the worker's submit polls while generation was not paused
    held_by_staleness: int = 0        # of which none could be submitted, and this bound was why
    held_by_inflight_cap: int = 0
    held_by_queue: int = 0
    groups_finished: int = 0          # groups scored and queued
    generation_s: float = 0.0         # their seconds from submission until the completions came back, summed
    scoring_s: float = 0.0            # and from then until scored (waiting for a scoring thread included)
    paused_polls: int = 0             # submit polls while generation was paused (in none of the above)
    scoring_busy_s: float = 0.0       # of scoring_s, the seconds the scorer itself ran (no wait for a thread)

    @property
    def group_generation_s(self) -> float | None:
        return self.generation_s / self.groups_finished if self.groups_finished else None

    @property
    def group_scoring_s(self) -> float | None:
        return self.scoring_s / self.groups_finished if self.groups_finished else None

    @property
    def group_scoring_busy_s(self) -> float | None:
        """A group's mean seconds in the scorer itself: what a scoring thread is busy with it."""
        return self.scoring_busy_s / self.groups_finished if self.groups_finished else None

    @property
    def group_latency_s(self) -> float | None:
        """A group's mean seconds from submission until queued, less any wait for a scoring
        thread: what Little's law multiplies (that wait grows with the groups in flight, so a
        latency holding it would call for more in flight the more there are)."""
        if not self.groups_finished:
            return None
        return (self.generation_s + self.scoring_busy_s) / self.groups_finished

    def share_held_by(self, bound: str) -> float:
        """Of the polls while generation was not paused."""
        held = {STALENESS: self.held_by_staleness, INFLIGHT_CAP: self.held_by_inflight_cap, QUEUE: self.held_by_queue}
        return held[bound] / self.polls if self.polls else 0.0

    @property
    def paused_share(self) -> float:
        """Of all the polls, those while generation was paused."""
        every_poll = self.polls + self.paused_polls
        return self.paused_polls / every_poll if every_poll else 0.0

    def metrics(self) -> dict[str, float]:
        """The step's metrics: the shares where the worker polled, the means where a group
        finished, and the paused share only where generation was paused (take_turns)."""
        metrics: dict[str, float] = {}
        if self.polls:
            metrics.update({ASYNC_BLOCKED_BY.name(bound=bound): self.share_held_by(bound)
                            for bound in (STALENESS, INFLIGHT_CAP, QUEUE)})
        if self.paused_polls:
            metrics[ASYNC_PAUSED_SHARE] = self.paused_share
        if self.group_generation_s is not None and self.group_scoring_s is not None:
            metrics[ROLLOUT_GROUP_GENERATION_S] = self.group_generation_s
            metrics[ROLLOUT_GROUP_SCORING_S] = self.group_scoring_s
        return metrics


class PipelineCounters:
    """Thread-safe: the worker's thread counts, the training loop takes (and so resets)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._paused = False
        self._reset()

    def pause(self, paused: bool) -> None:
        """Generation is paused (True) or not (False) from now on: polls meanwhile count as paused."""
        with self._lock:
            self._paused = paused

    def polled(self, held_by: str | None) -> None:
        """One submit poll; `held_by`: the bound that left no room (None: there was room, or
        only the wave rule held it back). While paused it counts as paused, whatever held it."""
        with self._lock:
            if self._paused:
                self._paused_polls += 1
                return
            self._polls += 1
            if held_by == STALENESS:
                self._staleness += 1
            elif held_by == INFLIGHT_CAP:
                self._inflight_cap += 1
            elif held_by == QUEUE:
                self._queue += 1

    def group_finished(self, generation_s: float, scoring_s: float, scoring_busy_s: float | None = None) -> None:
        """`scoring_busy_s`: of `scoring_s`, the scorer's own seconds (None: all of it)."""
        with self._lock:
            self._groups += 1
            self._generation_s += generation_s
            self._scoring_s += scoring_s
            self._scoring_busy_s += scoring_s if scoring_busy_s is None else scoring_busy_s

    def take(self) -> PipelineWindow:
        """What was counted since the last take."""
        with self._lock:
            window = PipelineWindow(self._polls, self._staleness, self._inflight_cap, self._queue,
                                    self._groups, self._generation_s, self._scoring_s, self._paused_polls,
                                    self._scoring_busy_s)
            self._reset()
        return window

    def _reset(self) -> None:
        self._polls = self._staleness = self._inflight_cap = self._queue = self._groups = self._paused_polls = 0
        self._generation_s = self._scoring_s = self._scoring_busy_s = 0.0
