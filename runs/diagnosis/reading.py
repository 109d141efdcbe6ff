"""A run's recent step metrics from the database, in the shape the engine reads: two queries,
whatever the run's length (the window's first step, then its points)."""
from runs.diagnosis.engine import Diagnosis, diagnose
from runs.diagnosis.window import STEP_TIME, WINDOW_STEPS
from runs.metrics_query import latest_per_step
from runs.models import MetricPoint, Run

# Every metric the engine reads (runs/diagnosis/*): those a run did not log are simply absent.
READ = (
    STEP_TIME, "async/wait_for_rollouts_s", "system/train_seconds", "system/weight_sync_s",
    "system/wait_for_evaluation_s", "system/generation_tokens_per_s", "system/training_tokens_per_s",
    "system/train_seconds_beside_generation", "async/staleness_mean", "async/dropped_stale", "async/queue_depth",
    "async/in_flight", "async/max_inflight", "async/ahead_bound", "async/blocked_by_staleness",
    "async/blocked_by_inflight_cap", "async/blocked_by_queue", "rollout/group_generation_s",
    "rollout/group_scoring_s",
)


def diagnosis_of(run: Run) -> Diagnosis:
    return diagnose(recent_series(run), run.config)


def recent_series(run: Run) -> dict[str, list[tuple[int, float]]]:
    """The points of READ from the window's first step on; a step trained again after a resume
    has the later attempt's value (runs.metrics_query.latest_per_step)."""
    first = first_step_of_window(run)
    if first is None:
        return {}
    rows = (MetricPoint.objects.filter(run=run, name__in=READ, step__gte=first).order_by("name", "step", "id")
            .values_list("name", "step", "value"))
    by_name: dict[str, list[tuple[int, float]]] = {}
    for name, step, value in rows:
        by_name.setdefault(name, []).append((step, value))
    return {name: latest_per_step(points) for name, points in by_name.items()}


def first_step_of_window(run: Run) -> int | None:
    """The earliest of the last WINDOW_STEPS + 1 steps with a step time (one more: the run's first
    step, left out by the engine, may be among them)."""
    steps = list(MetricPoint.objects.filter(run=run, name=STEP_TIME).order_by("-step").values_list("step", flat=True)
                 .distinct()[:WINDOW_STEPS + 1])
    return steps[-1] if steps else None
