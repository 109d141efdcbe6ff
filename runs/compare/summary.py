"""One line per run for the comparison's summary table: how far it got and how well it did."""
from django.utils import timezone

from runs.compare.fetch import Bounds, step_bounds
from runs.compare.series import MetricSeries
from worker.trainer.metric_names import ROLLOUT_REWARD_MEAN


def run_summary(run, reward: MetricSeries, tokens: MetricSeries, last_reward: float | None,
                last_step: int | None) -> dict:
    """`reward` and `tokens` are the series as compared: best reward is the highest point of
    the reward curve at the comparison's resolution (every point for runs shorter than it),
    tokens/s the mean of the generation throughput's points."""
    rewards = [value for _, value in reward.points.get(run.pk, [])]
    throughput = [value for _, value in tokens.points.get(run.pk, [])]
    return {
        "run": run.pk,
        "name": run.name,
        "status": run.status,
        "steps": max(run.current_step, last_step or 0),
        "max_steps": run.max_steps,
        "final_reward": last_reward,
        "best_reward": max(rewards, default=None),
        "duration_s": duration_s(run),
        "tokens_per_s": sum(throughput) / len(throughput) if throughput else None,
    }


def run_summaries(runs: list, reward: MetricSeries, tokens: MetricSeries,
                  last: dict[tuple[int, str], Bounds] | None = None) -> list[dict]:
    """`last`: step_bounds() already read for these runs and the reward metric, if at hand."""
    if last is None:
        last = step_bounds([run.pk for run in runs], [ROLLOUT_REWARD_MEAN])
    summaries = []
    for run in runs:
        bounds = last.get((run.pk, ROLLOUT_REWARD_MEAN))
        last_reward, last_step = (bounds.last_value, bounds.hi) if bounds else (None, None)
        summaries.append(run_summary(run, reward, tokens, last_reward, last_step))
    return summaries


def duration_s(run) -> float | None:
    """Seconds from the first start to the end, or to now while the run is still going."""
    if run.started_at is None:
        return None
    end = run.finished_at or (timezone.now() if run.is_active else None)
    return (end - run.started_at).total_seconds() if end else None
