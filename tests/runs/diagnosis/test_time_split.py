"""The time split: mean seconds per measured step, shares that sum to 1, no negative part."""
import pytest

from runs.diagnosis.engine import diagnose
from tests.support.made_up_runs import CONFIG, series, step_of


def test_the_split_gives_each_part_its_mean_seconds_and_the_rest_to_other():
    split = {row["part"]: row for row in diagnose(series(step_of(4.0, 10.0, 2.0, other=4.0)), CONFIG).time_split}
    assert [split[p]["seconds"] for p in ("waiting_for_rollouts", "training", "weight_sync", "evaluation", "other")] \
        == pytest.approx([4.0, 10.0, 2.0, 0.0, 4.0])
    assert split["training"]["share"] == pytest.approx(0.5)


def test_parts_adding_up_to_more_than_the_step_leave_other_at_zero_and_shares_summing_to_one():
    values = {**step_of(6.0, 6.0), "system/step_time_s": 10.0}  # parts 12 s of a 10 s step
    found = diagnose(series(values), CONFIG)
    assert {row["part"]: row["seconds"] for row in found.time_split}["other"] == 0.0
    assert sum(row["share"] for row in found.time_split) == pytest.approx(1.0)
    assert found.step_seconds == pytest.approx(12.0)


def test_the_first_step_and_steps_before_the_last_twenty_are_left_out():
    points = series(step_of(1.0, 1.0), steps=30)
    points["system/step_time_s"][0] = (1, 500.0)  # start-up
    found = diagnose(points, CONFIG)
    assert (found.window, found.steps_measured, found.step_seconds) == ([11, 30], 20, pytest.approx(2.5))


def test_a_step_without_a_step_time_is_not_measured():
    points = series(step_of(1.0, 1.0), steps=10)
    points["system/step_time_s"] = [point for point in points["system/step_time_s"] if point[0] != 5]
    found = diagnose(points, CONFIG)
    assert (found.window, found.steps_measured) == ([2, 10], 8)
