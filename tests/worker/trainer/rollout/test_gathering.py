"""A step takes the oldest fresh groups, drops stale ones, and waits for a group that would expire in flight."""
import pytest

from worker.trainer.rollout.arrivals import OldestFirstQueue
from worker.trainer.rollout.gathering import Cancelled, gather
from worker.trainer.rollout.groups import Group
from worker.trainer.rollout.staleness import StalenessPolicy

POLICY = StalenessPolicy(max_staleness=2, groups_per_step=2)


def group(index: int, version: int) -> Group:
    return Group(prompt_index=index, prompt_text="", prompt_ids=[], columns={}, completions=[], model_version=version)


class ScriptedRollouts:
    """Queued groups plus groups in flight that land, in order, each time the gatherer has to wait."""

    def __init__(self, queued=(), in_flight=()):
        self.queue = OldestFirstQueue()
        for g in queued:
            self.queue.put(g)
        self.in_flight = list(in_flight)
        self.waits = 0
        self.discarded = []

    def take(self, timeout_s, max_version=None):
        found = self.queue.take(timeout_s=0, max_version=max_version)
        if found is None and self.in_flight:
            self.waits += 1
            self.queue.put(self.in_flight.pop(0))
            found = self.queue.take(timeout_s=0, max_version=max_version)
        return found

    def put_back(self, g):
        self.queue.put(g)

    def discard(self, g):
        self.discarded.append(g)

    def in_flight_versions(self):
        return sorted({g.model_version for g in self.in_flight})


def test_takes_the_oldest_fresh_groups_and_leaves_the_rest_queued():
    rollouts = ScriptedRollouts(queued=[group(0, 5), group(1, 4), group(2, 5), group(3, 3)])
    got = gather(rollouts, POLICY, count=2, version=5, next_version=6)
    assert [g.prompt_index for g in got.groups] == [3, 1]
    assert len(rollouts.queue) == 2 and not got.dropped


def test_stale_groups_are_dropped_and_returned():
    rollouts = ScriptedRollouts(queued=[group(0, 1), group(1, 5), group(2, 4)])
    got = gather(rollouts, POLICY, count=2, version=5, next_version=6)
    assert [g.prompt_index for g in got.dropped] == [0]  # 5 - 1 > max_staleness 2
    assert rollouts.discarded == got.dropped  # their places are refilled at once
    assert [g.prompt_index for g in got.groups] == [2, 1]


def test_waits_for_a_group_that_would_expire_with_this_steps_sync():
    # Version 3 is fresh at 5 (staleness 2) and stale at 6: trained now or never.
    lagging, young = group(9, 3), group(8, 5)
    rollouts = ScriptedRollouts(queued=[group(0, 4), group(1, 5)], in_flight=[young, lagging])
    got = gather(rollouts, POLICY, count=2, version=5, next_version=6)
    assert [g.prompt_index for g in got.groups] == [9, 0]
    assert not got.dropped
    assert sorted(g.prompt_index for g in [rollouts.queue.take(0), rollouts.queue.take(0)]) == [1, 8]


def test_no_wait_when_the_step_does_not_sync():
    rollouts = ScriptedRollouts(queued=[group(0, 4), group(1, 5)], in_flight=[group(9, 3)])
    got = gather(rollouts, POLICY, count=2, version=5, next_version=5)
    assert [g.prompt_index for g in got.groups] == [0, 1] and rollouts.waits == 0


def test_no_wait_for_a_group_already_stale_in_flight():
    rollouts = ScriptedRollouts(queued=[group(0, 4), group(1, 5)], in_flight=[group(9, 2)])
    got = gather(rollouts, POLICY, count=2, version=5, next_version=6)
    assert [g.prompt_index for g in got.groups] == [0, 1] and rollouts.waits == 0


def test_cancel_while_waiting():
    with pytest.raises(Cancelled):
        gather(ScriptedRollouts(), POLICY, count=2, version=0, next_version=1, cancelled=lambda: True)
