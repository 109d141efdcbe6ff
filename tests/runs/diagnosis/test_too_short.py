"""A run too short to diagnose says so instead of guessing."""
from runs.diagnosis.engine import MIN_STEPS, diagnose
from tests.support.made_up_runs import CONFIG, series, step_of


def test_fewer_than_five_steps_after_the_first_is_too_short_and_says_how_many():
    found = diagnose(series(step_of(12.0, 1.0), steps=4), CONFIG)
    assert (found.status, found.steps_measured, found.bottleneck, found.suggestions) == ("too_short", 3, None, [])
    assert found.sentence == f"3 steps measured; a diagnosis needs {MIN_STEPS} after the first."


def test_five_steps_after_the_first_are_enough():
    assert diagnose(series(step_of(12.0, 1.0), steps=6), CONFIG).status == "ok"


def test_a_run_with_no_metrics_is_too_short_with_an_empty_split():
    found = diagnose({}, CONFIG)
    assert found.as_dict() | {"throughput": None, "staleness": None, "queue": None} == {
        "status": "too_short", "steps_measured": 0, "window": None, "bottleneck": None,
        "sentence": "No steps measured; a diagnosis needs 5 after the first.", "time_split": [],
        "step_seconds": None, "throughput": None, "staleness": None, "queue": None, "suggestions": [], "evidence": {}}


def test_a_too_short_run_still_shows_the_split_it_has():
    found = diagnose(series(step_of(12.0, 1.0), steps=3), CONFIG)
    assert found.time_split[0]["seconds"] == 12.0
