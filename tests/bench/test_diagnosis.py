"""bench/diagnosis.py's pure parts: a run's steps as the engine's series, the slow reward, the
verdicts and the share of the gap recovered (the runs themselves: tests/bench/test_smoke.py)."""
import argparse
import math

import pytest

from bench.diagnosis import (MAX_CALL_S, Measured, Row, SCENARIOS, chosen, main_row, recovered, refusal,
                             scenario_changes, scoring_seconds_a_group, series_of, slow_reward_source,
                             slow_reward_specs, step_seconds, suggested_changes, suggestion_text, verdict)
from runs.diagnosis.engine import diagnose
from worker.trainer.config import PRESETS, TrainingConfig
from worker.trainer.rewards.source_check import source_problems


def merged_steps(count: int, wait_s: float, train_s: float) -> dict[int, dict]:
    """metrics_by_step's shape: step 0's set-up, then `count` training steps."""
    steps = {0: {"time": 0.0, "values": {"setup/seconds": 3.0, "note": "text is no metric"}}}
    for step in range(1, count + 1):
        steps[step] = {"time": float(step), "values": {
            "system/step_time_s": wait_s + train_s, "async/wait_for_rollouts_s": wait_s,
            "system/train_seconds": train_s, "system/weight_sync_s": 0.0, "async/in_flight": 1.0,
            "train/loss": math.nan}}
    return steps


def diagnosis(bottleneck, shares: dict[str, float] | None = None, status="ok", suggestions=()) -> dict:
    return {"status": status, "bottleneck": bottleneck, "sentence": "", "suggestions": list(suggestions),
            "time_split": [{"part": part, "seconds": share, "share": share} for part, share in (shares or {}).items()]}


# --------------------------------------------------------------------------- series
def test_series_are_each_metrics_steps_in_order_without_text_or_nan():
    series = series_of(merged_steps(3, 1.0, 2.0))
    assert series["system/step_time_s"] == [(1, 3.0), (2, 3.0), (3, 3.0)]
    assert series["setup/seconds"] == [(0, 3.0)]
    assert "note" not in series and "train/loss" not in series


def test_the_engine_reads_the_series_a_run_waiting_for_rollouts_is_generation_bound():
    result = diagnose(series_of(merged_steps(8, wait_s=3.0, train_s=1.0)), TrainingConfig().model_dump()).as_dict()
    assert result["status"] == "ok"
    assert result["bottleneck"] == "generation"


def test_a_smoke_runs_two_steps_are_too_short_to_diagnose():
    result = diagnose(series_of(merged_steps(2, wait_s=3.0, train_s=1.0)), TrainingConfig().model_dump()).as_dict()
    assert result["status"] == "too_short" and result["bottleneck"] is None


def test_step_seconds_leave_the_first_step_out_and_a_spike_does_not_move_them():
    steps = [{"system/step_time_s": s} for s in (30.0, 2.0, 4.0, 3.0, 250.0, 3.0)]
    assert step_seconds(steps) == 3.0


# --------------------------------------------------------------------------- recovered
def test_a_fix_back_to_the_baseline_recovers_the_whole_gap():
    assert recovered(made_s=10.0, after_s=4.0, baseline_s=4.0) == 1.0
    assert recovered(made_s=10.0, after_s=7.0, baseline_s=4.0) == 0.5


def test_a_fix_that_slows_the_run_recovers_a_negative_share():
    assert recovered(made_s=10.0, after_s=13.0, baseline_s=4.0) == -0.5


def test_without_a_gap_or_a_rerun_nothing_is_recovered():
    assert recovered(made_s=4.0, after_s=3.0, baseline_s=5.0) is None
    assert recovered(made_s=10.0, after_s=None, baseline_s=4.0) is None


def test_a_made_run_within_a_tenth_of_the_baseline_has_no_gap():
    """3.32 s against 3.03 (run-to-run noise), then 2.11 after the change, read as 417% recovered."""
    assert recovered(made_s=3.32, after_s=2.11, baseline_s=3.03) is None
    assert recovered(made_s=3.40, after_s=3.10, baseline_s=3.00) == pytest.approx(0.75)


# --------------------------------------------------------------------------- verdicts
def test_a_made_bottleneck_is_met_only_when_named():
    waiting = {"waiting_for_rollouts": 0.7, "training": 0.3}
    assert verdict("scoring", diagnosis("scoring", waiting)) == "met"
    assert "missed" in verdict("scoring", diagnosis("generation", waiting))
    assert verdict("scoring", diagnosis(None, status="too_short")) == "too short"


def test_a_change_that_left_another_part_the_largest_made_no_bottleneck_to_name():
    mostly_training = {"waiting_for_rollouts": 0.05, "training": 0.95}
    said = verdict("generation", diagnosis("training", mostly_training))
    assert said == "not made (waiting_for_rollouts 5% of a step)"


def test_the_baseline_may_be_balanced_or_name_its_largest_part():
    assert verdict(None, diagnosis("balanced")).startswith("met")
    assert verdict(None, diagnosis("training", {"training": 0.8, "waiting_for_rollouts": 0.2})).startswith("met")


def test_a_baseline_bottleneck_that_is_not_its_largest_part_is_invented():
    assert "invented" in verdict(None, diagnosis("generation", {"training": 0.8, "waiting_for_rollouts": 0.2}))


# --------------------------------------------------------------------------- suggestions
SUGGESTION = {"knob": "per_device_train_batch_size", "current": 1, "proposed": 2, "why": "",
              "also_set": {"gradient_accumulation_steps": 8}}


def test_a_suggestion_changes_its_knob_and_what_it_sets_with_it():
    assert suggested_changes(SUGGESTION) == {"per_device_train_batch_size": 2, "gradient_accumulation_steps": 8}
    assert suggestion_text(SUGGESTION) == "per_device_train_batch_size: 1 → 2, gradient_accumulation_steps 8"
    assert suggestion_text(None) == "none"


def test_a_setting_the_config_refuses_is_named():
    assert refusal({**PRESETS["cpu-demo"], "max_inflight_tasks": 0}).startswith("max_inflight_tasks")
    assert refusal(dict(PRESETS["cpu-demo"])) is None


def test_the_table_row_shows_the_share_recovered_and_the_suggestion_applied():
    made = Measured("long_step", {}, "succeeded", [{"system/step_time_s": s} for s in (9.0, 10.0)], {},
                    diagnosis("training", {"training": 0.9}, suggestions=[SUGGESTION]), 30.0)
    after = Measured("long_step + fix", {}, "succeeded", [{"system/step_time_s": s} for s in (9.0, 7.0)], {},
                     diagnosis("training", {"training": 0.9}), 30.0)
    row = main_row(Row(SCENARIOS["long_step"], made, after), baseline_s=4.0)
    assert row[:4] == ("long_step", "training", "training", "met")
    assert row[5:] == ("10.00", "7.00", "4.00", "50%")


def test_a_bottleneck_that_was_not_made_recovers_nothing_however_fast_the_rerun():
    made = Measured("tiny_inflight", {}, "succeeded", [{"system/step_time_s": s} for s in (9.0, 10.0)], {},
                    diagnosis("training", {"training": 0.9, "waiting_for_rollouts": 0.0},
                              suggestions=[SUGGESTION]), 30.0)
    after = Measured("tiny_inflight + fix", {}, "succeeded", [{"system/step_time_s": s} for s in (9.0, 3.0)], {},
                     diagnosis("training", {"training": 0.9}), 30.0)
    row = main_row(Row(SCENARIOS["tiny_inflight"], made, after), baseline_s=4.0)
    assert row[3].startswith("not made") and row[-1] == "no gap"


# --------------------------------------------------------------------------- scenarios
def test_the_long_step_keeps_the_batch_in_micro_batches_of_one():
    changes = scenario_changes("long_step", PRESETS["cpu-demo"])
    config = TrainingConfig(**{**PRESETS["cpu-demo"], **changes})
    assert config.per_device_train_batch_size == 1
    assert config.completions_per_step == TrainingConfig(**PRESETS["cpu-demo"]).completions_per_step


def test_the_slow_reward_is_code_the_sandbox_takes_and_scores_nothing():
    source = slow_reward_source(0.0)
    assert source_problems(source) == []
    namespace: dict = {}
    exec(compile(source, "reward.py", "exec"), namespace)
    assert namespace["reward"](["p", "p"], ["a", "b"], answer=["1", "2"]) == [0.0, 0.0]


def test_a_slow_reward_longer_than_a_sandbox_call_is_split_into_several():
    specs = slow_reward_specs(seconds_a_group=20.0, group_size=8)
    assert len(specs) == 3 and len({spec["name"] for spec in specs}) == 3
    per_completion = float(specs[0]["source"].split("time.sleep(")[1].split(" ")[0])
    assert per_completion * 8 <= MAX_CALL_S
    assert per_completion * 8 * len(specs) == pytest.approx(20.0, abs=0.01)


def test_scoring_a_step_lasts_the_slow_factor_of_the_baseline_step():
    assert scoring_seconds_a_group(5.0, groups_per_step=2, scoring_threads=2, group_size=8, smoke=False) == 10.0
    assert scoring_seconds_a_group(5.0, groups_per_step=4, scoring_threads=2, group_size=8, smoke=False) == 5.0


def test_the_baseline_runs_first_and_unknown_scenarios_are_refused():
    assert chosen("long_step,baseline") == ["baseline", "long_step"]
    assert chosen(None)[0] == "baseline"
    with pytest.raises(argparse.ArgumentTypeError, match="slowest"):
        chosen("slowest")
