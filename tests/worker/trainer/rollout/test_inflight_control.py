"""max_inflight_tasks: auto: the cap rises when the trainer starves behind it, falls when groups
go stale or pile up, holds otherwise, and stays between its floor and the staleness bound."""
import pytest

from worker.trainer.rollout.inflight_control import InflightController, StepOutcome, cap_bounds, starting_cap


def outcome(**changes) -> StepOutcome:
    """A step that neither starved nor piled up: 10 s, no wait, one step's groups queued."""
    values = dict(step_s=10.0, waited_s=0.0, groups_trained=4, dropped_stale=0, queue_depth=4, held_by_cap=0.0,
                  group_latency_s=None)
    return StepOutcome(**{**values, **changes})


def controller(cap=4, groups_per_step=4, floor=1, ceiling=64) -> InflightController:
    return InflightController(cap, groups_per_step, floor, ceiling)


def starved(**changes) -> StepOutcome:
    return outcome(waited_s=5.0, held_by_cap=0.8, queue_depth=0, **changes)


def test_it_starts_at_one_steps_groups_within_its_bounds():
    assert starting_cap(groups_per_step=4, floor=1, ceiling=16) == 4
    assert starting_cap(groups_per_step=32, floor=1, ceiling=16) == 16
    assert starting_cap(groups_per_step=2, floor=8, ceiling=16) == 8


def test_the_bounds_are_the_staleness_bound_or_the_queue_and_one_group_or_a_wave():
    assert cap_bounds(useful_ahead=16, queue_maxsize=256, wave=1) == (1, 16)
    assert cap_bounds(useful_ahead=16, queue_maxsize=10, wave=1) == (1, 10)
    assert cap_bounds(useful_ahead=16, queue_maxsize=256, wave=8) == (8, 16)
    assert cap_bounds(useful_ahead=4, queue_maxsize=2, wave=8) == (2, 2)


def test_a_trainer_starved_behind_the_cap_raises_it_by_half_at_least():
    assert controller(cap=4).update(starved()) == 6


def test_the_raise_goes_as_far_as_littles_law_calls_for():
    # 4 groups in 5 s of training: 0.8 groups a second; a group takes 30 s: 24 must be in flight.
    assert controller(cap=4).update(starved(group_latency_s=30.0)) == 24


def test_a_trainer_that_waits_for_another_bound_leaves_the_cap_alone():
    assert controller(cap=4).update(outcome(waited_s=5.0, held_by_cap=0.0, queue_depth=0)) == 4


def test_a_cap_that_held_back_while_the_trainer_never_waited_is_not_raised():
    assert controller(cap=4).update(outcome(held_by_cap=0.9)) == 4


def test_groups_dropped_stale_lower_it_even_when_starved():
    assert controller(cap=8).update(outcome(dropped_stale=1)) == 6
    assert controller(cap=8).update(starved(dropped_stale=2)) == 6


def test_a_queue_far_beyond_a_steps_worth_with_no_wait_lowers_it():
    assert controller(cap=16).update(outcome(queue_depth=12)) == 12


def test_an_over_full_queue_lowers_it_no_further_than_littles_law_needs():
    # 4 groups in 10 s: 0.4 a second; 35 s a group: 14 needed in flight.
    assert controller(cap=16).update(outcome(queue_depth=12, group_latency_s=35.0)) == 14
    assert controller(cap=16).update(outcome(queue_depth=12, group_latency_s=100.0)) == 16  # never raised here


@pytest.mark.parametrize("cap,step,bounded", [
    (60, starved(group_latency_s=1000.0), 64),   # never above the ceiling (staleness bound, queue size)
    (1, outcome(dropped_stale=3), 1),            # never below one
])
def test_it_stays_within_its_bounds(cap, step, bounded):
    assert controller(cap=cap).update(step) == bounded


def test_it_never_goes_below_a_wave():
    assert controller(cap=8, floor=8).update(outcome(dropped_stale=3)) == 8


def test_rates_are_averaged_so_one_odd_step_moves_the_estimate_only_halfway():
    control = controller(cap=4)
    control.update(outcome(group_latency_s=10.0))   # 0.4 groups a second
    control.update(outcome(group_latency_s=30.0))
    assert control.latency_s == 20.0 and control.needed == 8


def test_repeated_starvation_climbs_to_the_ceiling_and_stops():
    control, caps = controller(cap=1, ceiling=16), []
    for _ in range(8):
        caps.append(control.update(starved()))
    assert caps == [2, 3, 5, 8, 12, 16, 16, 16]
