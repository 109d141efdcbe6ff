"""An evaluation's answers as a summary: per-function means, pass@1 and pass@k."""
import math
import statistics

from worker.trainer.rollout.groups import Group
from worker.trainer.rollout.metrics import episode_metrics
from worker.trainer import metric_names as names


def pass_at_k(n: int, c: int, k: int) -> float:
    """The chance that at least one of k answers drawn from n (c of them right) is right: the
    unbiased estimator of Chen et al. (2021), 1 - C(n-c, k) / C(n, k)."""
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def answer_records(group: Group, threshold: float) -> list[dict]:
    """Each answer as the evaluation event carries it (worker.trainer.events.EvalAnswer)."""
    return [{"text": c.text, "rewards": {name: values[i] for name, values in group.rewards.items()},
             "total_reward": group.totals[i] if _scored(group, i) else None,
             "passed": _scored(group, i) and group.totals[i] >= threshold,
             "num_tokens": len(c.token_ids), "finish_reason": c.finish_reason}
            for i, c in enumerate(group.completions)]


def _scored(group: Group, i: int) -> bool:
    """An answer no function could score (all None) has no total, and does not pass."""
    return any(values[i] is not None for values in group.rewards.values())


def summary(groups: list[Group], answers: list[list[dict]], k: int, seconds: float) -> dict[str, float]:
    """The eval/ metrics of one evaluation."""
    totals = [a["total_reward"] for per_example in answers for a in per_example if a["total_reward"] is not None]
    metrics = {names.EVAL_REWARD_MEAN: statistics.fmean(totals) if totals else 0.0,
               names.EVAL_PASS_AT_1: statistics.fmean(sum(a["passed"] for a in per_example) / len(per_example)
                                               for per_example in answers),
               names.EVAL_EXAMPLES: float(len(answers)), names.EVAL_SECONDS: seconds,
               names.EVAL_TRUNCATED: statistics.fmean(a["finish_reason"] == "length"
                                                  for per_example in answers for a in per_example)}
    if k > 1:
        metrics[names.EVAL_PASS_AT_K.name(k=k)] = statistics.fmean(
            pass_at_k(len(per_example), sum(a["passed"] for a in per_example), k) for per_example in answers)
    for name in groups[0].rewards:
        values = [v for g in groups for v in g.rewards[name] if v is not None]
        if values:
            metrics[names.EVAL_REWARD_FN_MEAN.name(reward=name)] = statistics.fmean(values)
    metrics.update({names.EVAL_EPISODE.name(metric=name): value for name, value in episode_metrics(groups).items()})
    return metrics
