"""The signal alarms: a metric past its threshold at a logged step (pure; worker.trainer.config.ALARMS).

sampler_drift trips at once (one such step already weighed sampled tokens wrongly); the slow
signals (entropy_collapse, no_learning_signal, truncation, judge_disagreement) must hold for
alarm_patience logged steps (runs.alarms.streaks), as a bad batch comes and goes. A signal may
watch a family of metrics, one per judge (a `*` in its metric), each member on its own.
Details: docs/capabilities/evaluation.md#when-an-alarm-trips-and-again.
"""
from dataclasses import dataclass, replace

from runs.alarms.settings import AlarmSettings
from runs.alarms.streaks import trips
from worker.trainer.metric_names import (
    JUDGE_PAYS_REFUSED,
    ROLLOUT_CLIPPED_RATIO,
    ROLLOUT_FRAC_REWARD_ZERO_STD,
    TRAIN_ENTROPY,
    TRAIN_IMPORTANCE_RATIO_MAX,
    TRAIN_KL_TO_SAMPLER,
)


@dataclass(frozen=True)
class Signal:
    metric: str   # as the trainer reports it; a family's, with `*` for the member (judge/*/pays_refused)
    knob: str     # the threshold's name in the config
    above: bool   # past the threshold means above it (else below)
    text: str     # how a message says it, with {value}, {threshold} and a family's {member}
    member: str = ""  # a family's signal for one member: its name (a judge's)

    @property
    def family(self) -> bool:
        return "*" in self.metric

    def member_of(self, name: str) -> str | None:
        """The member `name` is the metric of, in this family (None: it is not of it)."""
        prefix, _, suffix = self.metric.partition("*")
        fits = len(name) > len(prefix) + len(suffix) and name.startswith(prefix) and name.endswith(suffix)
        return name[len(prefix):len(name) - len(suffix)] if self.family and fits else None

    def watches(self, name: str) -> bool:
        return name == self.metric or self.member_of(name) is not None

    def for_member(self, name: str) -> "Signal":
        """This family's signal for the metric `name` of one member."""
        member = self.member_of(name)
        if member is None:
            raise ValueError(f"{name} is no member's metric of the family {self.metric}")
        return replace(self, metric=name, member=member)

    def past(self, value: float, thresholds: dict[str, float]) -> bool:
        threshold = thresholds[self.knob]
        return value > threshold if self.above else value < threshold

    def describe(self, value: float, thresholds: dict[str, float]) -> str:
        return self.text.format(value=value, threshold=thresholds[self.knob], member=self.member)


@dataclass(frozen=True)
class Rule:
    kind: str
    signals: tuple[Signal, ...]
    slow: bool  # must hold for alarm_patience logged steps; else trips at once

    def need(self, settings: AlarmSettings) -> int:
        return settings.patience if self.slow else 1

    def members(self, names) -> list["Rule"]:
        """The rule as it applies to the metrics `names`: itself, or a family's rule once per
        member among them (a family rule has its one signal)."""
        [signal, *_] = self.signals
        if not signal.family:
            return [self]
        return [replace(self, signals=(signal.for_member(name),)) for name in sorted(names) if signal.watches(name)]


@dataclass(frozen=True)
class Trip:
    """An alarm to raise: what tripped, at which step, and the numbers."""
    kind: str
    step: int
    message: str
    values: dict[str, float]


RULES = (
    Rule("entropy_collapse", (Signal(TRAIN_ENTROPY, "alarm_entropy_min", False,
                                     "entropy {value:.3g} nats/token below {threshold:.3g}"),), slow=True),
    Rule("sampler_drift", (
        Signal(TRAIN_KL_TO_SAMPLER, "alarm_kl_to_sampler_max", True, "KL to the sampler {value:.3g} above "
                                                                       "{threshold:.3g}"),
        Signal(TRAIN_IMPORTANCE_RATIO_MAX, "alarm_importance_ratio_max", True, "importance ratio {value:.3g} "
                                                                                 "above {threshold:.3g}"),
    ), slow=False),
    # The share of groups whose rewards are all equal (std below the advantage's floor), which
    # the training step reports (worker/trainer/training/step.py): their advantages, and gradients, are 0.
    Rule("no_learning_signal", (Signal(ROLLOUT_FRAC_REWARD_ZERO_STD, "alarm_equal_rewards_max", True,
                                       "{value:.0%} of groups with all-equal rewards (above {threshold:.0%})"),),
         slow=True),
    Rule("truncation", (Signal(ROLLOUT_CLIPPED_RATIO, "alarm_truncated_max", True,
                               "{value:.0%} of completions cut at the length limit (above {threshold:.0%})"),),
         slow=True),
    # Per judge, the share of the completions a verifier refuses that the judge pays for
    # (worker/trainer/rewards/judges/disagreement.py); absent at a step where none was refused.
    Rule("judge_disagreement", (Signal(JUDGE_PAYS_REFUSED.glob, "alarm_judge_disagreement_max", True,
                                       "judge {member!r} pays for {value:.0%} of the completions a verifier "
                                       "refuses (above {threshold:.0%})"),), slow=True),
)


def watched(names) -> list[str]:
    """Those of the metric `names` that a rule watches: the fixed ones in the rules' order, then a
    family's members by name."""
    signals = [signal for rule in RULES for signal in rule.signals]
    fixed = [signal.metric for signal in signals if not signal.family and signal.metric in names]
    return fixed + sorted(name for name in names if any(s.family and s.watches(name) for s in signals))


def rule_trips(rule: Rule, series: dict[str, dict[int, float]], fresh: set[int],
               settings: AlarmSettings) -> list[Trip]:
    """`series`: {metric: {step: value}} over the window; `fresh`: the steps this batch brought."""
    return [trip for member in rule.members(series) for trip in _member_trips(member, series, fresh, settings)]


def _member_trips(rule: Rule, series: dict[str, dict[int, float]], fresh: set[int],
                  settings: AlarmSettings) -> list[Trip]:
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
