"""The alarm rules, pure: when a signal trips, once while it holds, with what message and numbers."""
import pytest

from runs.alarms.divergence import eval_trips, reward_start
from runs.alarms.rules import RULES, rule_trips, watched
from runs.alarms.settings import AlarmSettings
from runs.alarms.streaks import Streak, trips

SETTINGS = AlarmSettings.of({"alarm_patience": 3})
RULE = {rule.kind: rule for rule in RULES}


def conditions(pattern: str, start: int = 1) -> list[tuple[int, bool]]:
    """'..xx.' -> [(1, False), (2, False), (3, True), (4, True), (5, False)]."""
    return [(start + i, mark == "x") for i, mark in enumerate(pattern)]


def trip_steps(pattern, need, rearm=3, fresh=None):
    steps = conditions(pattern)
    return [streak.last for streak in trips(steps, fresh or {s for s, _ in steps}, need, rearm)]


def test_a_spike_trips_at_once_and_once_while_it_holds():
    assert trip_steps("..xxxx", need=1) == [3]


def test_a_slow_signal_trips_after_holding_for_patience_steps():
    assert trip_steps("xx.xxx.", need=3) == [6]
    assert trips(conditions("xx.xxx."), set(range(1, 8)), 3, 3) == [Streak(first=4, last=6)]


def test_an_alarm_is_raised_again_only_after_its_condition_cleared_for_patience_steps():
    assert trip_steps("x.x..x...x", need=1) == [1, 10]
    assert trip_steps("xxx.xxx...xxx", need=3) == [3, 13]


def test_only_fresh_steps_trip_and_earlier_ones_only_set_the_state():
    assert trip_steps("xxxxx", need=3, fresh={4, 5}) == []  # tripped at step 3, in an earlier batch
    assert trip_steps("...xx", need=3, fresh={5}) == []
    assert trip_steps("..xxx", need=3, fresh={5}) == [5]


def series(name, values, start=1):
    return {name: {start + i: value for i, value in enumerate(values)}}


def test_entropy_collapse_says_the_value_threshold_and_steps():
    window = series("train/entropy", [0.2, 0.04, 0.03, 0.012], start=17)
    [trip] = rule_trips(RULE["entropy_collapse"], window, {20}, SETTINGS)
    assert trip.step == 20
    assert trip.message == "entropy 0.012 nats/token below 0.05 for 3 logged steps (steps 18-20)"
    assert trip.values == {"train/entropy": 0.012, "alarm_entropy_min": 0.05}


@pytest.mark.parametrize("metric, value, said", [
    ("train/kl_to_sampler", 1.8, "KL to the sampler 1.8 above 1 at step 2"),
    ("train/importance_ratio_max", 35.2, "importance ratio 35.2 above 20 at step 2"),
])
def test_sampler_drift_trips_on_one_step_of_either_signal(metric, value, said):
    window = {"train/kl_to_sampler": {1: 0.01, 2: 0.02}, "train/importance_ratio_max": {1: 1.5, 2: 2.0}}
    window[metric][2] = value
    [trip] = rule_trips(RULE["sampler_drift"], window, {2}, SETTINGS)
    assert trip.message == said
    assert trip.values[metric] == value and trip.values["alarm_kl_to_sampler_max"] == 1.0


def test_shares_are_said_in_percent():
    window = series("rollout/clipped_ratio", [0.6, 0.7, 0.64])
    [trip] = rule_trips(RULE["truncation"], window, {1, 2, 3}, SETTINGS)
    assert trip.message == ("64% of completions cut at the length limit (above 50%) for 3 logged steps "
                            "(steps 1-3)")
    equal = series("rollout/frac_reward_zero_std", [0.9, 0.95, 0.85])
    [trip] = rule_trips(RULE["no_learning_signal"], equal, {3}, SETTINGS)
    assert trip.message.startswith("85% of groups with all-equal rewards (above 80%)")


def test_a_signal_within_its_threshold_raises_nothing():
    window = series("train/entropy", [0.5, 0.4, 0.3, 0.06])
    assert rule_trips(RULE["entropy_collapse"], window, {1, 2, 3, 4}, SETTINGS) == []


def rewards_by_step(low_until: int, low: float, high: float, last: int) -> dict[int, float]:
    return {step: low if step <= low_until else high for step in range(1, last + 1)}


def test_eval_diverging_trips_when_pass_at_1_falls_while_the_reward_rises():
    evals = [(10, 0.5), (20, 0.3)]
    rewards = rewards_by_step(10, 0.2, 0.6, 20)
    [trip] = eval_trips(evals, rewards, {20}, drop=0.05)
    assert trip.kind == "eval_diverging" and trip.step == 20
    assert trip.message == ("pass@1 fell from 0.5 to 0.3 between the evaluations at steps 10 and 20 (more than "
                            "0.05) while the mean training reward rose from 0.2 to 0.6")
    assert trip.values == {"eval/pass@1": 0.3, "eval/pass@1_before": 0.5, "rollout/reward_mean": 0.6,
                           "rollout/reward_mean_before": 0.2, "alarm_eval_drop": 0.05}


@pytest.mark.parametrize("evals, rewards", [
    ([(10, 0.5), (20, 0.47)], rewards_by_step(10, 0.2, 0.6, 20)),  # fell by less than the drop
    ([(10, 0.5), (20, 0.3)], rewards_by_step(10, 0.6, 0.2, 20)),   # the reward fell too
    ([(10, 0.5), (20, 0.3)], {15: 0.9}),                           # nothing to compare the reward with
    ([(20, 0.3)], rewards_by_step(10, 0.2, 0.6, 20)),              # one evaluation
])
def test_eval_diverging_needs_both_a_drop_and_a_rising_reward(evals, rewards):
    assert eval_trips(evals, rewards, {20}, drop=0.05) == []


def test_eval_diverging_is_raised_once_while_it_holds():
    evals = [(10, 0.6), (20, 0.5), (30, 0.4), (40, 0.45), (50, 0.3)]
    rewards = {step: step / 100 for step in range(1, 51)}  # rising all along
    assert [trip.step for trip in eval_trips(evals, rewards, {20, 30, 40, 50}, drop=0.05)] == [20, 50]
    assert eval_trips(evals[:3], rewards, {30}, drop=0.05) == []  # held at 20 already
    assert reward_start(evals) == 0


def test_settings_fall_back_to_the_schema_defaults():
    settings = AlarmSettings.of({"alarm_stop_on": "entropy_collapse, truncation"})
    assert settings.patience == 3 and settings.thresholds["alarm_entropy_min"] == 0.05
    assert settings.stop_on == {"entropy_collapse", "truncation"}
    assert AlarmSettings.of({}).stop_on == frozenset()


def test_a_judge_paying_for_what_the_verifier_refuses_trips_naming_the_judge():
    window = series("judge/tone/pays_refused", [0.2, 0.45, 0.6, 0.5], start=4)
    [trip] = rule_trips(RULE["judge_disagreement"], window, {7}, SETTINGS)
    assert (trip.kind, trip.step) == ("judge_disagreement", 7)
    assert trip.message == ("judge 'tone' pays for 50% of the completions a verifier refuses (above 30%) "
                            "for 3 logged steps (steps 5-7)")
    assert trip.values == {"judge/tone/pays_refused": 0.5, "alarm_judge_disagreement_max": 0.3}


def test_each_judge_is_watched_on_its_own():
    window = {**series("judge/tone/pays_refused", [0.9, 0.1, 0.9, 0.1]),
              **series("judge/facts/pays_refused", [0.9, 0.8, 0.7, 0.1]),
              **series("judge/facts/disagreement", [0.9, 0.9, 0.9, 0.9]),
              **series("rollout/clipped_ratio", [0.9, 0.9, 0.9, 0.9])}
    [trip] = rule_trips(RULE["judge_disagreement"], window, {1, 2, 3, 4}, SETTINGS)
    assert trip.step == 3 and trip.message.startswith("judge 'facts' pays for 70%")
    assert set(trip.values) == {"judge/facts/pays_refused", "alarm_judge_disagreement_max"}


def test_a_step_where_the_verifier_refused_nothing_neither_holds_nor_breaks_a_streak():
    window = {"judge/tone/pays_refused": {1: 0.8, 2: 0.8, 5: 0.8}}  # steps 3 and 4 refused nothing
    [trip] = rule_trips(RULE["judge_disagreement"], window, {5}, SETTINGS)
    assert trip.message.endswith("(steps 1-5)")


def test_a_family_rule_watches_its_members_only():
    assert watched({"judge/tone/pays_refused", "judge/tone/disagreement", "judge//pays_refused", "train/loss",
                    "rollout/clipped_ratio", "train/entropy", "judge/a/b/pays_refused"}) == [
        "train/entropy", "rollout/clipped_ratio", "judge/a/b/pays_refused", "judge/tone/pays_refused"]
    assert rule_trips(RULE["judge_disagreement"], series("train/entropy", [0.0, 0.0, 0.0]), {3}, SETTINGS) == []


def test_the_judge_threshold_comes_from_the_config():
    settings = AlarmSettings.of({"alarm_patience": 1, "alarm_judge_disagreement_max": 0.6})
    window = series("judge/tone/pays_refused", [0.5, 0.7])
    assert [trip.step for trip in rule_trips(RULE["judge_disagreement"], window, {1, 2}, settings)] == [2]
    assert AlarmSettings.of({}).thresholds["alarm_judge_disagreement_max"] == 0.3
