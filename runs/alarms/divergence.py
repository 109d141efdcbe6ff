"""eval_diverging: the evaluation falling while the training reward rises (pure).

Between two evaluations at steps a < b: pass@1 fell by more than alarm_eval_drop, and the
training reward rose: its mean over the steps since the earlier evaluation, (a, b], is above
its mean over as many steps before it, (a - (b - a), a]. Means over windows, not two points,
because one batch's reward is noisy; windows of one length, so that both weigh alike. It is
raised at an evaluation where this holds and did not hold at the evaluation before: once while
it holds, and evaluations are sparse enough that one without it clears it.
"""
from dataclasses import dataclass
from statistics import fmean

from runs.alarms.rules import Trip
from worker.trainer.metric_names import EVAL_PASS_AT_1, ROLLOUT_REWARD_MEAN

KNOB = "alarm_eval_drop"


@dataclass(frozen=True)
class Divergence:
    steps: tuple[int, int]        # the earlier and the later evaluation
    pass_at_1: tuple[float, float]
    reward: tuple[float, float]   # the training reward's mean over the window before, and since


def reward_start(evals: list[tuple[int, float]]) -> int:
    """The first step whose training reward the comparisons of consecutive `evals` read."""
    (a, _), (b, _) = evals[0], evals[1]
    return a - (b - a)


def divergence(earlier: tuple[int, float], later: tuple[int, float], rewards: dict[int, float],
               drop: float) -> Divergence | None:
    (a, pass_a), (b, pass_b) = earlier, later
    before = [value for step, value in rewards.items() if a - (b - a) < step <= a]
    since = [value for step, value in rewards.items() if a < step <= b]
    if pass_a - pass_b <= drop or not before or not since or fmean(since) <= fmean(before):
        return None
    return Divergence(steps=(a, b), pass_at_1=(pass_a, pass_b), reward=(fmean(before), fmean(since)))


def eval_trips(evals: list[tuple[int, float]], rewards: dict[int, float], fresh: set[int], drop: float) -> list[Trip]:
    """`evals`: (step, pass@1) in step order, with the two before the fresh ones; `rewards`:
    {step: rollout/reward_mean} from reward_start(evals) on."""
    found = []
    for i in range(1, len(evals)):
        held = divergence(evals[i - 1], evals[i], rewards, drop)
        held_before = i >= 2 and divergence(evals[i - 2], evals[i - 1], rewards, drop) is not None
        if evals[i][0] in fresh and held and not held_before:
            found.append(_trip(held, drop))
    return found


def _trip(d: Divergence, drop: float) -> Trip:
    message = (f"pass@1 fell from {d.pass_at_1[0]:.3g} to {d.pass_at_1[1]:.3g} between the evaluations at steps "
               f"{d.steps[0]} and {d.steps[1]} (more than {drop:.3g}) while the mean training reward rose from "
               f"{d.reward[0]:.3g} to {d.reward[1]:.3g}")
    values = {EVAL_PASS_AT_1: d.pass_at_1[1], f"{EVAL_PASS_AT_1}_before": d.pass_at_1[0],
              ROLLOUT_REWARD_MEAN: d.reward[1], f"{ROLLOUT_REWARD_MEAN}_before": d.reward[0], KNOB: drop}
    return Trip(kind="eval_diverging", step=d.steps[1], message=message, values=values)
