"""The rollout pipeline over the window: throughput on both sides, how often staleness hits its
bound, and how full the in-flight cap runs. Metrics an older run did not log are None."""
from collections.abc import Mapping
from typing import Any

from runs.diagnosis.run_config import groups_per_step, setting
from runs.diagnosis.window import Window
from worker.trainer.metric_names import (
    ASYNC_BLOCKED_BY_INFLIGHT_CAP,
    ASYNC_BLOCKED_BY_STALENESS,
    ASYNC_DROPPED_STALE,
    ASYNC_IN_FLIGHT,
    ASYNC_MAX_INFLIGHT,
    ASYNC_QUEUE_DEPTH,
    ASYNC_STALENESS_MEAN,
    SYSTEM_GENERATION_TOKENS_PER_S,
    SYSTEM_TRAINING_TOKENS_PER_S,
)


def throughput(window: Window) -> dict:
    return {"generation_tokens_per_s": window.mean(SYSTEM_GENERATION_TOKENS_PER_S),
            "training_tokens_per_s": window.mean(SYSTEM_TRAINING_TOKENS_PER_S)}


def staleness(window: Window, config: Mapping[str, Any]) -> dict:
    dropped, steps = dropped_groups(window)
    trained = steps * groups_per_step(config)
    return {"dropped_groups": dropped,
            "dropped_share": dropped / (dropped + trained) if dropped + trained else None,
            "max_staleness": setting(config, "max_staleness"),
            "staleness_mean": window.mean(ASYNC_STALENESS_MEAN),
            "blocked_by_staleness": window.mean(ASYNC_BLOCKED_BY_STALENESS)}


def dropped_groups(window: Window) -> tuple[int, int]:
    """Groups dropped as stale between the window's first and last logged step, and the steps
    between them. The count is cumulative since the attempt started: a fall is a new attempt,
    whose count starts again from 0."""
    points = window.ordered(ASYNC_DROPPED_STALE)
    dropped = sum(after - before if after >= before else after
                  for (_, before), (_, after) in zip(points, points[1:]))
    return int(round(dropped)), (points[-1][0] - points[0][0]) if points else 0


def queue(window: Window, config: Mapping[str, Any]) -> dict:
    configured = setting(config, "max_inflight_tasks")
    cap_mean = window.mean(ASYNC_MAX_INFLIGHT)
    in_flight = window.mean(ASYNC_IN_FLIGHT)
    cap = cap_mean if cap_mean is not None else configured if isinstance(configured, int) else None
    return {"fullness": min(1.0, in_flight / cap) if in_flight is not None and cap else None,
            "in_flight_mean": in_flight,
            "queue_depth_mean": window.mean(ASYNC_QUEUE_DEPTH),
            "max_inflight": configured,
            "cap_mean": cap_mean,
            "blocked_by_inflight_cap": window.mean(ASYNC_BLOCKED_BY_INFLIGHT_CAP)}
