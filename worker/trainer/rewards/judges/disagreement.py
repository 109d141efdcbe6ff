"""How far a judge agrees with the verifiers of a run, per step (pure).

A run with a checked reward (accuracy, exact match: RewardFunction.verifier) and a judge has two
opinions of each completion. Where they differ is worth watching, and one direction most: a
judge paying for what the verifier refuses is how reward hacking starts (the policy learns to
please the judge, not to be right). The alarm judge_disagreement (runs/alarms/rules.py) watches
`judge/<judge>/pays_refused`.

A completion's verdict is the verifiers' together: it passes when every verifier that scored it
passes, and is refused when any refuses, so that the metric names stay one per judge whatever
the number of verifiers. A completion the judge or every verifier left without a value (None: a
timeout, an unreadable answer, no reference answer) is left out: it says nothing either way.
"""
from worker.trainer.rollout.groups import Group
from worker.trainer.rollout.scoring import RewardFunction
from worker.trainer.metric_names import JUDGE_DISAGREEMENT, JUDGE_PAYS_REFUSED

# A verifier gives 1 for a pass and 0 for a fail; anything at or above the middle is a pass.
VERIFIER_PASS = 0.5


def disagreement_metrics(groups: list[Group], functions: list[RewardFunction]) -> dict[str, float]:
    """Per judge (a function with a pass_threshold), over the completions of `groups`:
    judge/<judge>/disagreement, the share where the judge's pay and the verifiers' verdict
    differ, and judge/<judge>/pays_refused, the share of the refused ones it pays for (absent
    where none was refused). Nothing without both a judge and a verifier."""
    verifiers = [f.name for f in functions if f.verifier]
    judges = [(f.name, f.pass_threshold) for f in functions if f.pass_threshold is not None]
    if not verifiers or not judges:
        return {}
    verdicts = [_verdict([group.rewards.get(name, [None] * len(group.completions))[i] for name in verifiers])
                for group in groups for i in range(len(group.completions))]
    metrics: dict[str, float] = {}
    for judge, threshold in judges:
        pays = [_pays(value, threshold) for group in groups
                for value in group.rewards.get(judge, [None] * len(group.completions))]
        metrics.update(_compared(judge, pays, verdicts))
    return metrics


def _verdict(values: list[float | None]) -> bool | None:
    """True: every verifier that scored it passed; None: none scored it."""
    scored = [value for value in values if value is not None]
    return all(value >= VERIFIER_PASS for value in scored) if scored else None


def _pays(value: float | None, threshold: float) -> bool | None:
    return None if value is None else value >= threshold


def _compared(judge: str, pays: list[bool | None], verdicts: list[bool | None]) -> dict[str, float]:
    both = [(paid, passed) for paid, passed in zip(pays, verdicts) if paid is not None and passed is not None]
    if not both:
        return {}
    metrics = {JUDGE_DISAGREEMENT.name(judge=judge): sum(paid != passed for paid, passed in both) / len(both)}
    refused = [paid for paid, passed in both if not passed]
    if refused:
        metrics[JUDGE_PAYS_REFUSED.name(judge=judge)] = sum(refused) / len(refused)
    return metrics
