"""The signal alarms: a metric past its threshold at a logged step (pure; worker.trainer.config.ALARMS).

When each trips (runs.alarms.streaks), and why:
- sampler_drift trips at once, on one step whose KL between trainer and sampler log-probs, or
  whose largest importance ratio, is above its maximum: one such step already means sampled
  tokens were weighed wrongly (a weight sync gone wrong, a numerics bug); waiting lets it harm.
- entropy_collapse, no_learning_signal and truncation must hold for alarm_patience logged steps
  in a row: entropy dips, all-equal groups and long answers come and go with an easy or a hard
  batch; a collapse, a stall or a length problem is one that stays.
"""
from dataclasses import dataclass

from runs.alarms.settings import AlarmSettings
from runs.alarms.streaks import trips


@dataclass(frozen=True)
class Signal:
    metric: str   # as the trainer reports it
    knob: str     # the threshold's name in the config
    above: bool   # past the threshold means above it (else below)
    text: str     # how a message says it, with {value} and {threshold}

    def past(self, value: float, thresholds: dict[str, float]) -> bool:
        threshold = thresholds[self.knob]
        return value > threshold if self.above else value < threshold

    def describe(self, value: float, thresholds: dict[str, float]) -> str:
        return self.text.format(value=value, threshold=thresholds[self.knob])


@dataclass(frozen=True)
class Rule:
    kind: str
    signals: tuple[Signal, ...]
    slow: bool  # must hold for alarm_patience logged steps; else trips at once

    def need(self, settings: AlarmSettings) -> int:
        return settings.patience if self.slow else 1


@dataclass(frozen=True)
class Trip:
    """An alarm to raise: what tripped, at which step, and the numbers."""
    kind: str
    step: int
    message: str
    values: dict[str, float]


RULES = (
    Rule("entropy_collapse", (Signal("train/entropy", "alarm_entropy_min", False,
                                     "entropy {value:.3g} nats/token below {threshold:.3g}"),), slow=True),
    Rule("sampler_drift", (
        Signal("train/kl_to_sampler", "alarm_kl_to_sampler_max", True, "KL to the sampler {value:.3g} above "
                                                                       "{threshold:.3g}"),
        Signal("train/importance_ratio_max", "alarm_importance_ratio_max", True, "importance ratio {value:.3g} "
                                                                                 "above {threshold:.3g}"),
    ), slow=False),
    # The share of groups whose rewards are all equal (std below the advantage's floor), which
    # the training step reports (worker/trainer/step.py): their advantages, and gradients, are 0.
    Rule("no_learning_signal", (Signal("rollout/frac_reward_zero_std", "alarm_equal_rewards_max", True,
                                       "{value:.0%} of groups with all-equal rewards (above {threshold:.0%})"),),
         slow=True),
    Rule("truncation", (Signal("rollout/clipped_ratio", "alarm_truncated_max", True,
                               "{value:.0%} of completions cut at the length limit (above {threshold:.0%})"),),
         slow=True),
)
WATCHED = tuple(signal.metric for rule in RULES for signal in rule.signals)


def rule_trips(rule: Rule, series: dict[str, dict[int, float]], fresh: set[int],
               settings: AlarmSettings) -> list[Trip]:
    """`series`: {metric: {step: value}} over the window; `fresh`: the steps this batch brought."""
    values = [series.get(signal.metric, {}) for signal in rule.signals]
    steps = sorted(set().union(*values))
    conditions = [(step, any(step in points and signal.past(points[step], settings.thresholds)
                             for signal, points in zip(rule.signals, values))) for step in steps]
    need = rule.need(settings)
    return [_trip(rule, streak, values, settings, need)
            for streak in trips(conditions, fresh, need, settings.patience)]


def _trip(rule, streak, values, settings, need) -> Trip:
    at = {signal.metric: points[streak.last] for signal, points in zip(rule.signals, values) if streak.last in points}
    what = "; ".join(signal.describe(at[signal.metric], settings.thresholds) for signal in rule.signals
                     if signal.metric in at and signal.past(at[signal.metric], settings.thresholds))
    when = f"at step {streak.last}" if need == 1 else f"for {need} logged steps (steps {streak.first}-{streak.last})"
    thresholds = {signal.knob: settings.thresholds[signal.knob] for signal in rule.signals}
    return Trip(kind=rule.kind, step=streak.last, message=f"{what} {when}", values={**at, **thresholds})
