"""Choosing the groups one training step trains on.

A step takes the oldest fresh groups. Stale ones (older than `max_staleness`) are dropped
and returned, so that the caller can count them and mark their prompts as used.

Groups finish out of the order they were submitted in, and a group that lags behind in
flight would pass `max_staleness` while younger groups are trained, losing all of its
generation: more than a tenth of the groups in the arithmetic demo, where vLLM only
generates between training steps (bench/LOG.md, 2026-11-21). So when a group still in
flight would expire with this step's weight sync, the step waits for it and trains it in
place of its youngest group, which goes back to the queue for the next step. The wait is
generation time either way: the server finishes that group while the trainer waits.
"""
import time
from dataclasses import dataclass, field
from typing import Protocol
from collections.abc import Callable

from worker.trainer.rollout.groups import Group
from worker.trainer.rollout.staleness import StalenessPolicy

EXPIRING_POLL_S = 0.2  # how often the wait for an expiring group looks at what is still in flight


class Cancelled(Exception):
    """The control plane asked the run to stop while the step waited for groups."""


class Rollouts(Protocol):
    def take(self, timeout_s: float, max_version: int | None = None) -> Group | None: ...
    def put_back(self, group: Group) -> None: ...
    def discard(self, group: Group) -> None: ...
    def in_flight_versions(self) -> list[int]: ...


@dataclass
class Gathered:
    groups: list[Group]
    dropped: list[Group] = field(default_factory=list)  # too stale to train on
    waited_s: float = 0.0                               # blocked on the rollout worker, in all
    waited_for_expiring_s: float = 0.0                  # of which for a group about to expire


def gather(rollouts: Rollouts, staleness: StalenessPolicy, count: int, version: int, next_version: int,
           cancelled: Callable[[], bool] = lambda: False, poll_s: float = 1.0) -> Gathered:
    """`count` fresh groups for a step trained at `version` whose weight sync makes it `next_version`."""
    got = Gathered(groups=[])
    while True:
        expiring = _expiring_in_flight(rollouts, staleness, version, next_version)
        full = len(got.groups) >= count
        if full and expiring is None:
            return got
        if cancelled():
            raise Cancelled()
        started = time.perf_counter()
        if full:  # only the expiring group (or one as old) can change this step
            group = rollouts.take(timeout_s=EXPIRING_POLL_S, max_version=expiring)
        else:
            group = rollouts.take(timeout_s=poll_s)
        waited = time.perf_counter() - started
        got.waited_s += waited
        got.waited_for_expiring_s += waited if full else 0.0
        if group is None:
            continue
        if staleness.is_stale(group.model_version, version):
            rollouts.discard(group)
            got.dropped.append(group)
            continue
        got.groups.append(group)
        if len(got.groups) > count:
            got.groups.sort(key=lambda g: g.model_version)
            rollouts.put_back(got.groups.pop())


def _expiring_in_flight(rollouts: Rollouts, staleness: StalenessPolicy, version: int, next_version: int) -> int | None:
    """The newest version in flight that is fresh now and stale after this step's sync, if any."""
    expiring = [v for v in rollouts.in_flight_versions()
                if not staleness.is_stale(v, version) and staleness.is_stale(v, next_version)]
    return max(expiring, default=None)
