"""Where the logged parts do not explain a step's time (the rest is most of it, or none of the
parts was logged), no bottleneck is guessed: status ok, bottleneck null, a sentence saying so and
the share unexplained, no suggestion."""
from runs.diagnosis.engine import diagnose
from tests.support.made_up_runs import CONFIG, series, step_of


def test_a_step_mostly_outside_the_logged_parts_names_no_bottleneck_and_says_how_much():
    found = diagnose(series(step_of(1.0, 2.0, other=7.0)), CONFIG)
    assert (found.status, found.bottleneck, found.suggestions) == ("ok", None, [])
    assert found.sentence.startswith("The logged parts do not explain the step time: 70% of each step "
                                     "(7.0 s of 10.0 s) is outside waiting for rollouts")


def test_a_run_that_logged_only_its_step_time_names_no_bottleneck():
    found = diagnose(series({"system/step_time_s": 10.0}), CONFIG)
    assert (found.status, found.bottleneck, found.suggestions) == ("ok", None, [])
    assert "no bottleneck is named" in found.sentence


def test_the_rest_under_half_the_step_with_no_part_dominating_stays_balanced():
    assert diagnose(series(step_of(1.5, 4.0, other=4.5)), CONFIG).bottleneck == "balanced"


def test_a_named_side_stays_named_however_large_the_rest():
    assert diagnose(series(step_of(3.0, 0.5, other=6.0)), CONFIG).bottleneck == "generation"
