"""bench.learning's arithmetic and tables, without a model: the intervals it judges the demos by,
and what it prints for runs that met, missed or never evaluated twice."""
import math

import pytest

from bench.learning import (
    SUMMARY_HEADER, Change, RunResult, change_interval, demo_spec, evaluation_table, mean_change, run_report,
    parse_weights, summary_rows, verdict, wilson, with_dataset, with_weights,
)
from runs.demos.definitions import DEMOS
from tests.support.bench_tables import table_rows, tables_in


def test_wilson_matches_the_textbook_figure_and_stays_inside_zero_and_one():
    low, high = wilson(0.5, 100)
    assert low == pytest.approx(0.4038, abs=1e-4) and high == pytest.approx(0.5962, abs=1e-4)
    low, high = wilson(0.0, 64)
    assert low == 0.0 and 0.05 < high < 0.06  # the normal interval would be 0 wide
    assert wilson(1.0, 64)[1] == 1.0


def test_the_change_interval_stays_within_what_a_change_can_be():
    low, high = change_interval(0.0, 64, 0.98, 64)
    assert 0.98 < high <= 1.0 and 0.85 < low < 0.98  # the normal interval ran to +1.01
    assert -1.0 <= change_interval(0.98, 64, 0.0, 64)[0] < -0.98


def test_away_from_the_ends_the_change_interval_is_the_difference_of_two_proportions():
    low, high = change_interval(0.70, 64, 0.80, 64)
    half = 1.959964 * math.sqrt(0.7 * 0.3 / 64 + 0.8 * 0.2 / 64)
    assert (low, high) == pytest.approx((0.1 - half, 0.1 + half), abs=0.01)
    assert low < 0 < high  # the issue's +0.10 on 64 rows: within noise


def test_a_change_from_none_right_to_all_right_has_an_interval_of_its_own():
    """Newcombe's published example (his method 10): 56/70 against 48/80, 0.0524 to 0.3339."""
    assert change_interval(48 / 80, 80, 56 / 70, 70) == pytest.approx((0.0524, 0.3339), abs=1e-4)
    low, high = change_interval(0.0, 64, 1.0, 64)  # the tool-use demo's: the normal one is 0 wide
    assert high == pytest.approx(1.0) and 0.85 < low < 0.95
    mean, low, high = mean_change([Change(0.0, 64, 1.0, 64)] * 3)
    assert mean == 1.0 and 0.9 < low < 1.0 and high == pytest.approx(1.0)


def test_192_problems_put_a_gain_of_015_beyond_its_interval():
    low, _ = change_interval(0.55, 192, 0.70, 192)
    assert low > 0


def test_the_mean_change_over_seeds_narrows_with_more_runs():
    one = mean_change([Change(0.5, 192, 0.65, 192)])
    three = mean_change([Change(0.5, 192, 0.65, 192)] * 3)
    assert one[0] == three[0] == pytest.approx(0.15)
    assert three[2] - three[1] == pytest.approx((one[2] - one[1]) / math.sqrt(3))


def test_a_target_is_met_only_when_reached_and_beyond_noise():
    assert verdict(0.2, 0.05, 0.15) == "met"
    assert verdict(0.2, -0.01, 0.15) == "MISSED"
    assert verdict(0.1, 0.05, 0.15) == "MISSED"


def evals(*shares, n=192):
    return {step * 10: {"eval/pass@1": share, "eval/examples": n, "eval/seconds": 9.0}
            for step, share in enumerate(shares)}


def steps(*entropies):
    return [{"train/entropy": e, "rollout/reward/accuracy_mean": 0.5, "rollout/frac_reward_zero_std": 0.0}
            for e in entropies]


def test_a_run_report_has_each_evaluation_with_its_interval_and_the_change_with_its_verdict():
    report = run_report(RunResult("arithmetic", 42, "completed", 20.0, evals(0.5, 0.6, 0.7), steps(0.5, 0.3, 0.05)))
    evaluation, measures = tables_in(report)
    assert [row[0] for row in evaluation[1:]] == ["0", "10", "20"]
    assert table_rows(evaluation)["20"][1] == "{:.2f} – {:.2f}".format(*wilson(0.7, 192))
    rows = table_rows(measures)
    assert rows["held-out change, first → last"][0] == "0.50 → 0.70: +0.20"
    assert rows["held-out change, first → last"][1].endswith("met")
    assert rows["entropy min, 5-step mean"] == ["0.283", "stayed > 0.1: yes"]  # fewer steps: their mean
    assert rows["entropy min, one step"] == ["0.050", "step 3; 1 step(s) under 0.1"]


def test_the_entropy_floor_is_judged_on_five_steps_in_a_row_not_one():
    """One step's entropy is two problems' completions: one easy step is not a collapse, five are."""
    one_easy_step = RunResult("arithmetic", 42, "completed", 8.0, evals(0.5, 0.7), steps(*[0.5] * 9, 0.05, *[0.5] * 5))
    rows = table_rows(tables_in(run_report(one_easy_step))[1])
    assert rows["entropy min, 5-step mean"] == ["0.410", "stayed > 0.1: yes"]
    assert one_easy_step.entropy_min == pytest.approx(0.41)
    collapsed = RunResult("arithmetic", 42, "completed", 8.0, evals(0.5, 0.7), steps(*[0.5] * 5, *[0.05] * 6))
    rows = table_rows(tables_in(run_report(collapsed))[1])
    assert rows["entropy min, 5-step mean"] == ["0.050", "stayed > 0.1: NO (first below by step 10)"]
    assert rows["entropy min, one step"] == ["0.050", "step 6; 6 step(s) under 0.1"]


def test_the_summary_gives_each_demo_its_mean_change_target_and_entropy():
    results = [RunResult("arithmetic", seed, "completed", 20.0, evals(0.5, 0.68), steps(0.4, 0.2))
               for seed in (42, 43)]
    results.append(RunResult("tool-use", 42, "completed", 11.0, evals(0.0, 0.3, n=64), steps(0.05, 0.05)))
    results.append(RunResult("tool-use", 43, "failed", 1.0, evals(0.0, n=64), steps()))
    rows = {row[0]: row for row in summary_rows(results)}
    assert len(SUMMARY_HEADER) == len(rows["arithmetic"])
    assert rows["arithmetic"][2:4] == ("+0.18 +0.18", "+0.18") and rows["arithmetic"][6] == "met"
    assert rows["arithmetic"][7] == "0.300 (yes)"  # the mean of fewer steps than a window
    assert rows["tool-use"][1] == 2 and rows["tool-use"][2] == "+0.30"  # the failed run has no change
    assert rows["tool-use"][6] == "MISSED" and rows["tool-use"][7] == "0.050 (NO)"


def test_an_evaluation_table_row_names_its_problems():
    table = tables_in(evaluation_table(evals(0.25, n=64)))[0]
    assert table_rows(table)["0"] == ["0.25", "{:.2f} – {:.2f}".format(*wilson(0.25, 64)), "64", "9"]


@pytest.mark.parametrize("key", ["arithmetic", "tool-use"])
def test_the_run_spec_is_the_demo_definitions(key):
    """One source: the benchmark trains on the home page's dataset, rewards and environment."""
    from pathlib import Path

    from worker.trainer.config import PRESETS, TrainingConfig
    from worker.trainer.spec import LaunchSpec

    demo = DEMOS[key]
    config = TrainingConfig(**demo.config_values(PRESETS))
    spec = LaunchSpec.model_validate(demo_spec(demo, Path("/tmp/out"), "http://127.0.0.1:1", config))
    assert spec.dataset.params == demo.dataset["generator_params"]
    assert [r.name for r in spec.rewards] == [fields["name"] for fields, _ in demo.rewards]
    assert [r.name for r in spec.eval_rewards] == demo.eval_rewards
    assert (spec.environment is None) == (demo.environment is None)
    assert spec.config.eval_examples == demo.config_values(PRESETS)["eval_examples"]


def test_a_weight_named_by_its_builtin_changes_that_reward_alone():
    demo = with_weights(DEMOS["arithmetic"], {"format": 0.25})
    assert [(fields["builtin"], weight) for fields, weight in demo.rewards] == [("accuracy", 1.0), ("format", 0.25)]
    assert DEMOS["arithmetic"].rewards[1][1] == 0.0  # the home page's demo is left as it is


def test_a_weight_for_a_reward_the_demo_lacks_is_refused_naming_those_it_has():
    with pytest.raises(ValueError, match="no reward length.*accuracy"):
        with_weights(DEMOS["arithmetic"], {"length": 0.5})


def test_a_weight_that_is_not_a_number_is_refused_with_the_form_expected():
    assert parse_weights(["format=0.5", "Demo: accuracy=2"]) == {"format": 0.5, "Demo: accuracy": 2.0}
    with pytest.raises(ValueError, match="NAME=NUMBER"):
        parse_weights(["format=half"])


def test_a_dataset_change_sets_those_generator_parameters_alone():
    demo = with_dataset(DEMOS["arithmetic"], {"operators": "+-"})
    assert demo.dataset["generator_params"] == {**DEMOS["arithmetic"].dataset["generator_params"], "operators": "+-"}
    assert DEMOS["arithmetic"].dataset["generator_params"]["operators"] == "+"  # the home page's demo is left as it is


def test_a_dataset_parameter_the_generator_refuses_stops_the_bench_naming_it(capsys):
    from bench.learning import main

    with pytest.raises(SystemExit):
        main(["--demo", "arithmetic", "--dataset", "operators=/", "--smoke"])
    assert "operators" in capsys.readouterr().err
