"""The bounded windows of points the alarm rules read: a few queries per batch, each along
MetricPoint's index (run, name, step), for the watched metrics only."""
from runs.alarms.divergence import reward_start
from runs.telemetry.models import MetricPoint
from worker.trainer.metric_names import EVAL_PASS_AT_1, ROLLOUT_REWARD_MEAN


def fresh_steps(points, names) -> set[int]:
    """The steps of this batch's metric events (runs.live.messages.MetricPointRow) that report any of `names`."""
    return {point.step for point in points if any(name in point.values for name in names)}


def signal_window(run, fresh: set[int], names: tuple[str, ...], lookback: int) -> dict[str, dict[int, float]]:
    """{name: {step: value}} from `lookback` logged steps before the first fresh step to the last.
    Training metrics come in one event per logged step, so one name's steps are the logged steps."""
    first, last = min(fresh), max(fresh)
    earlier = (MetricPoint.objects.filter(run=run, name=names[0], step__lt=first).order_by("-step")
               .values_list("step", flat=True)[lookback - 1:lookback])
    rows = MetricPoint.objects.filter(run=run, name__in=names, step__gte=next(iter(earlier), 0), step__lte=last)
    series: dict[str, dict[int, float]] = {}
    for name, step, value in rows.order_by("step", "id").values_list("name", "step", "value"):
        series.setdefault(name, {})[step] = value  # a step evaluated again after a resume: the latest stands
    return series


def eval_window(run, fresh: set[int]) -> tuple[list[tuple[int, float]], dict[int, float]]:
    """The evaluations up to the last fresh one, with the two before the fresh ones, as
    [(step, pass@1)], and the training reward the comparisons between them read."""
    newest = (MetricPoint.objects.filter(run=run, name=EVAL_PASS_AT_1, step__lte=max(fresh))
              .order_by("-step", "-id").values_list("step", "value")[:len(fresh) + 2])
    evals = sorted(dict(reversed(list(newest))).items())
    if len(evals) < 2:
        return evals, {}
    rewards = MetricPoint.objects.filter(run=run, name=ROLLOUT_REWARD_MEAN, step__gt=reward_start(evals),
                                         step__lte=evals[-1][0])
    return evals, dict(rewards.order_by("step", "id").values_list("step", "value"))
