"""A run's recent step metrics from the database, in the shape the engine reads: two queries,
whatever the run's length (the window's first step, then its points). The first logged step of
each attempt after a resume is left out, as the engine leaves out the run's first: it holds
start-up (loading the model, the server's first requests). Suggestions the run's pool could not
start are dropped (startable.py)."""
from dataclasses import replace

from runs.diagnosis.engine import Diagnosis, diagnose
from runs.diagnosis.startable import startable
from runs.diagnosis.window import WINDOW_STEPS
from runs.telemetry.metrics_query import latest_per_step
from runs.telemetry.models import MetricPoint
from runs.training_runs.models import Run
from worker.trainer.metric_names import (
    ASYNC_AHEAD_BOUND,
    ASYNC_BLOCKED_BY_INFLIGHT_CAP,
    ASYNC_BLOCKED_BY_QUEUE,
    ASYNC_BLOCKED_BY_STALENESS,
    ASYNC_DROPPED_STALE,
    ASYNC_IN_FLIGHT,
    ASYNC_MAX_INFLIGHT,
    ASYNC_PAUSED_SHARE,
    ASYNC_QUEUE_DEPTH,
    ASYNC_STALENESS_MEAN,
    ASYNC_WAIT_FOR_ROLLOUTS_S,
    ROLLOUT_GROUP_GENERATION_S,
    ROLLOUT_GROUP_SCORING_S,
    SYSTEM_GENERATION_TOKENS_PER_S,
    SYSTEM_STEP_TIME_S,
    SYSTEM_TRAIN_SECONDS,
    SYSTEM_TRAIN_SECONDS_BESIDE_GENERATION,
    SYSTEM_TRAINING_TOKENS_PER_S,
    SYSTEM_WAIT_FOR_EVALUATION_S,
    SYSTEM_WEIGHT_SYNC_S,
)

# Every metric the engine reads (runs/diagnosis/*): those a run did not log are simply absent.
READ = (
    SYSTEM_STEP_TIME_S, ASYNC_WAIT_FOR_ROLLOUTS_S, SYSTEM_TRAIN_SECONDS, SYSTEM_WEIGHT_SYNC_S,
    SYSTEM_WAIT_FOR_EVALUATION_S, SYSTEM_GENERATION_TOKENS_PER_S, SYSTEM_TRAINING_TOKENS_PER_S,
    SYSTEM_TRAIN_SECONDS_BESIDE_GENERATION, ASYNC_STALENESS_MEAN, ASYNC_DROPPED_STALE, ASYNC_QUEUE_DEPTH,
    ASYNC_IN_FLIGHT, ASYNC_MAX_INFLIGHT, ASYNC_AHEAD_BOUND, ASYNC_BLOCKED_BY_STALENESS,
    ASYNC_BLOCKED_BY_INFLIGHT_CAP, ASYNC_BLOCKED_BY_QUEUE, ROLLOUT_GROUP_GENERATION_S,
    ROLLOUT_GROUP_SCORING_S, ASYNC_PAUSED_SHARE,
)


def diagnosis_of(run: Run) -> Diagnosis:
    diagnosis = diagnose(recent_series(run), run.config)
    return replace(diagnosis, suggestions=startable(diagnosis.suggestions, run.config))


def recent_series(run: Run) -> dict[str, list[tuple[int, float]]]:
    """The points of READ from the window's first step on, less each attempt's first step; a step
    trained again after a resume has the later attempt's value (runs.telemetry.metrics_query.latest_per_step)."""
    steps = last_steps(run)
    if not steps:
        return {}
    starts = attempt_starts(steps)
    rows = (MetricPoint.objects.filter(run=run, name__in=READ, step__gte=min(steps)).order_by("name", "step", "id")
            .values_list("name", "step", "value"))
    by_name: dict[str, list[tuple[int, float]]] = {}
    for name, step, value in rows:
        if step not in starts:
            by_name.setdefault(name, []).append((step, value))
    return {name: latest_per_step(points) for name, points in by_name.items()}


def last_steps(run: Run) -> dict[int, int]:
    """{step: attempt} of the last steps with a step time, the latest attempt's where a step was
    stored twice. Enough of them for the window: WINDOW_STEPS, the run's first step (left out by
    the engine) and the step before the window (it tells whether the window's first began an
    attempt), twice over for the attempts' first steps left out and the steps stored twice."""
    points = (MetricPoint.objects.filter(run=run, name=SYSTEM_STEP_TIME_S).order_by("-step", "-attempt")
              .values_list("step", "attempt")[:2 * (WINDOW_STEPS + 2)])
    steps: dict[int, int] = {}
    for step, attempt in points:
        steps.setdefault(step, attempt)
    return steps


def attempt_starts(steps: dict[int, int]) -> set[int]:
    """The steps that began an attempt after a resume: the first logged step whose attempt differs
    from the step logged before it (the oldest step here, with none before it, counts as no start)."""
    ordered = sorted(steps.items())
    return {step for (_, before), (step, attempt) in zip(ordered, ordered[1:]) if attempt != before}
