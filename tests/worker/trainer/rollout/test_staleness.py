"""Staleness accounting: how far ahead rollouts may run, and which groups are too old."""
import pytest

from worker.trainer.rollout.staleness import StalenessPolicy


def test_useful_ahead_covers_the_versions_a_group_may_wait():
    policy = StalenessPolicy(max_staleness=2, groups_per_step=4, weight_sync_steps=1)
    # 4 groups a step: the 8th group ahead is trained two syncs later (the current step's and the next's).
    assert policy.useful_ahead == 8


def test_syncing_less_often_allows_more_ahead():
    assert StalenessPolicy(max_staleness=1, groups_per_step=4, weight_sync_steps=3).useful_ahead == 12


def test_zero_staleness_still_generates_one_step_ahead():
    assert StalenessPolicy(max_staleness=0, groups_per_step=4).useful_ahead == 4


def test_budget_is_the_tightest_of_staleness_inflight_and_queue_room():
    policy = StalenessPolicy(max_staleness=2, groups_per_step=4)
    assert policy.submit_budget(ahead=0, max_inflight=100, in_flight=0, queue_room=100) == 8
    assert policy.submit_budget(ahead=6, max_inflight=100, in_flight=6, queue_room=100) == 2
    assert policy.submit_budget(ahead=0, max_inflight=3, in_flight=0, queue_room=100) == 3
    assert policy.submit_budget(ahead=0, max_inflight=100, in_flight=0, queue_room=1) == 1
    assert policy.submit_budget(ahead=9, max_inflight=100, in_flight=9, queue_room=100) == 0


def test_group_older_than_max_staleness_is_stale():
    policy = StalenessPolicy(max_staleness=2, groups_per_step=1)
    assert policy.staleness(group_version=3, current_version=5) == 2
    assert not policy.is_stale(3, 5)
    assert policy.is_stale(2, 5)


def test_zero_staleness_is_fully_on_policy():
    policy = StalenessPolicy(max_staleness=0, groups_per_step=1)
    assert not policy.is_stale(4, 4) and policy.is_stale(3, 4)


def test_a_wave_is_held_back_until_it_can_go_whole():
    policy = StalenessPolicy(max_staleness=4, groups_per_step=2)
    assert policy.half_ahead == 4
    assert policy.submit_budget(ahead=6, max_inflight=100, in_flight=0, queue_room=100, wave=4) == 0
    assert policy.submit_budget(ahead=4, max_inflight=100, in_flight=0, queue_room=100, wave=4) == 4
    assert policy.submit_budget(ahead=6, max_inflight=100, in_flight=0, queue_room=100) == 2  # no waves


def test_a_wave_is_never_waited_for_while_the_trainer_lacks_a_step():
    policy = StalenessPolicy(max_staleness=1, groups_per_step=4)  # useful bound 4, waves of 2
    # 3 groups ahead, 1 may be submitted: less than a wave, but the step needs a fourth.
    assert policy.submit_budget(ahead=3, max_inflight=100, in_flight=0, queue_room=100, wave=2) == 1


@pytest.mark.parametrize("max_staleness", [0, 1, 2, 4])
@pytest.mark.parametrize("groups_per_step", [1, 2, 3, 4])
@pytest.mark.parametrize("max_inflight", [1, 2, 16])
def test_waves_never_leave_the_trainer_short_with_nothing_in_flight(max_staleness, groups_per_step, max_inflight):
    policy = StalenessPolicy(max_staleness=max_staleness, groups_per_step=groups_per_step)
    for held in range(groups_per_step):  # the trainer holds fewer than a step and waits
        budget = policy.submit_budget(ahead=held, max_inflight=max_inflight, in_flight=0,
                                      queue_room=100, wave=policy.half_ahead)
        assert budget >= 1


@pytest.mark.parametrize(("ahead", "max_inflight", "in_flight", "queue_room", "bound"), [
    (8, 100, 2, 100, "staleness"),     # 8 ahead of a bound of 8
    (4, 4, 4, 100, "inflight_cap"),    # the cap is full, the staleness bound is not
    (4, 100, 1, 0, "queue"),           # the queue has no room
    (4, 2, 4, 100, "inflight_cap"),    # a cap lowered below what is in flight
    (8, 4, 4, 100, "staleness"),       # cap and staleness both full: a larger cap would not help
    (4, 4, 4, 0, "queue"),             # cap and queue both full: likewise
    (4, 100, 0, 100, None),            # room left
])
def test_the_bound_that_leaves_no_room_is_named(ahead, max_inflight, in_flight, queue_room, bound):
    policy = StalenessPolicy(max_staleness=2, groups_per_step=4)  # useful bound 8
    assert policy.holding_bound(ahead, max_inflight, in_flight, queue_room) == bound
    assert (bound is None) == (policy.submit_budget(ahead, max_inflight, in_flight, queue_room) > 0)
