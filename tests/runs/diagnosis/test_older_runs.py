"""Runs from before the pipeline's new metrics (the blocked shares, the cap in force, the
rollout timings) are still diagnosed: what they did not log is null, not a guess."""
from runs.diagnosis.engine import diagnose
from tests.support.made_up_runs import CONFIG, series, step_of


def test_without_the_new_metrics_the_sections_hold_nulls_and_the_bottleneck_is_still_named():
    found = diagnose(series(step_of(12.0, 6.0, async__in_flight=4)), CONFIG)
    assert found.bottleneck == "generation"
    assert (found.queue["cap_mean"], found.queue["blocked_by_inflight_cap"], found.staleness["blocked_by_staleness"]) \
        == (None, None, None)
    assert found.queue["fullness"] == 0.25  # 4 in flight of the config's 16


def test_an_in_flight_count_near_the_configured_cap_counts_as_the_cap_holding_submission_back():
    found = diagnose(series(step_of(12.0, 6.0, async__in_flight=4)), {**CONFIG, "max_inflight_tasks": 4})
    assert "in-flight cap of 4 held submission back (in flight at 100% of it)" in found.sentence
    assert found.suggestions[0]["proposed"] == 8  # the staleness bound the config gives: 2 groups × 4 versions


def test_without_rollout_timings_waiting_is_generation_not_scoring():
    assert diagnose(series(step_of(12.0, 6.0)), CONFIG).bottleneck == "generation"


def test_a_config_missing_knobs_reads_their_defaults():
    found = diagnose(series(step_of(12.0, 6.0, async__in_flight=64)), {})
    assert found.queue["max_inflight"] == 64 and found.staleness["max_staleness"] == 4


def test_dropped_groups_count_across_an_attempt_restarting_its_count():
    points = series(step_of(1.0, 1.0), steps=8)
    points["async/dropped_stale"] = [(s, v) for s, v in zip(range(1, 9), (0, 2, 3, 5, 1, 1, 2, 2))]
    # steps 2..8: +1, +2, restart at 1 (+1), +0, +1, +0
    assert diagnose(points, CONFIG).staleness["dropped_groups"] == 5


def test_groups_in_flight_and_queued_near_the_staleness_bound_count_as_the_staleness_bound_holding_it_back():
    # the CPU demo: 2 groups a step × max_staleness 4 = 8 groups ahead, under the cap of 16
    found = diagnose(series(step_of(12.0, 6.0, async__in_flight=6, async__queue_depth=2)), CONFIG)
    assert found.sentence.endswith("while the staleness bound (max_staleness 4) held submission back.")
    assert [(s["knob"], s["proposed"]) for s in found.suggestions] == [("max_staleness", 5)]
