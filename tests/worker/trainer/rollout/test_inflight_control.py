"""max_inflight_tasks: auto: the cap rises when the trainer starves behind it, falls when groups
go stale or pile up, holds otherwise, and stays between its floor and the staleness bound; slow
scoring does not feed its own target, and a steady load settles (simulated: tests/.../steady_load.py)."""
import pytest

from tests.support.steady_load import Load, run_steady
from worker.trainer.rollout.inflight_control import (HEADROOM, REMEMBER_STEPS, InflightController, StepOutcome,
                                                     cap_bounds, starting_cap)


def outcome(**changes) -> StepOutcome:
    """A step that neither starved nor piled up: 10 s, no wait, one step's groups queued."""
    values = dict(step_s=10.0, waited_s=0.0, groups_trained=4, dropped_stale=0, queue_depth=4, held_by_cap=0.0,
                  group_latency_s=None)
    return StepOutcome(**{**values, **changes})


def controller(cap=4, groups_per_step=4, floor=1, ceiling=64, scoring_threads=None) -> InflightController:
    return InflightController(cap, groups_per_step, floor, ceiling, scoring_threads=scoring_threads)


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


def test_littles_law_asks_no_more_in_flight_than_the_scoring_threads_get_through():
    # The trainer would take 0.8 groups a second; 2 threads at 5 s a group score 0.4: 0.4 * 10 s.
    control = controller(cap=4, scoring_threads=2)
    control.update(outcome(group_latency_s=10.0, group_scoring_busy_s=5.0, step_s=5.0))
    assert control.needed == 4
    assert controller(cap=4).update(starved(group_latency_s=10.0)) == 8  # scoring threads unknown: the trainer's pace


def test_a_raise_stops_at_headroom_over_what_littles_law_calls_for():
    control = controller(cap=4)
    control.update(outcome(group_latency_s=10.0))  # 0.4 groups a second: 4 needed
    caps = [control.update(starved(group_latency_s=10.0)) for _ in range(8)]
    # 4 groups in 5 s of training then: 0.8 a second, 8 needed at last; the raises stop at twice that.
    assert control.needed == 8 and caps[-1] == caps[-2] == HEADROOM * 8 < 64


def test_a_raise_never_lowers_a_cap_already_beyond_the_headroom():
    control = controller(cap=40)
    assert control.update(starved(group_latency_s=10.0)) == 40


def test_a_stale_drop_lowers_it_no_further_than_littles_law_needs():
    # 4 groups in 10 s: 0.4 a second; 35 s a group: 14 needed in flight.
    assert controller(cap=16).update(outcome(dropped_stale=1, group_latency_s=35.0)) == 14


def test_it_is_not_lowered_again_to_a_cap_the_trainer_recently_starved_behind():
    control = controller(cap=8)
    assert control.update(starved()) == 12
    assert control.update(outcome(queue_depth=12)) == 9    # a quarter down would be 9: above 8, allowed
    assert control.update(outcome(queue_depth=12)) == 9    # 6 would starve again, as 8 did
    assert control.update(outcome(dropped_stale=1)) == 9


def test_a_starved_cap_is_forgotten_after_a_while():
    control = controller(cap=8)
    control.update(starved())
    for _ in range(REMEMBER_STEPS):
        control.update(outcome())
    assert control.update(outcome(queue_depth=12)) == 9


def test_slow_scoring_does_not_drive_the_cap_to_the_staleness_bound():
    # 2 s to generate a group, 4 s for one of 2 threads to score it: 0.5 groups a second at
    # most, against the 1 a second the trainer takes; groups queue for a thread, which no cap
    # changes. Raised on that wait, the cap climbed to the bound (32) and stayed.
    simulated = run_steady(Load(generation_s=2.0, scoring_s=4.0, scoring_threads=2), steps=60)
    assert max(simulated.caps[-30:]) <= 8


def test_a_steady_load_settles():
    simulated = run_steady(Load(generation_s=8.0, jitter=0.3), steps=80)
    assert len(set(simulated.caps[-40:])) == 1 and sum(simulated.waited_s[-40:]) == 0


def test_a_steady_load_with_a_stale_drop_now_and_then_settles_without_starving():
    # A quarter down at each drop, below what Little's law needs, then starved and raised by
    # half: the cap sawed between 3 and 15 for as long as the load held, and the trainer waited.
    simulated = run_steady(Load(generation_s=8.0, jitter=0.3, drop_every=5), steps=80)
    assert len(set(simulated.caps[-40:])) == 1 and sum(simulated.waited_s[-40:]) == 0
