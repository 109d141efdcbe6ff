"""The rollout pipeline over the window: throughput on both sides, how often staleness hits its
bound, and how full the in-flight cap runs. Metrics an older run did not log are None."""
from collections.abc import Mapping
from typing import Any

from runs.diagnosis.run_config import groups_per_step, setting
from runs.diagnosis.window import Window


def throughput(window: Window) -> dict:
    return {"generation_tokens_per_s": window.mean("system/generation_tokens_per_s"),
            "training_tokens_per_s": window.mean("system/training_tokens_per_s")}


def staleness(window: Window, config: Mapping[str, Any]) -> dict:
    dropped, steps = dropped_groups(window)
    trained = steps * groups_per_step(config)
    return {"dropped_groups": dropped,
            "dropped_share": dropped / (dropped + trained) if dropped + trained else None,
            "max_staleness": setting(config, "max_staleness"),
            "staleness_mean": window.mean("async/staleness_mean"),
            "blocked_by_staleness": window.mean("async/blocked_by_staleness")}


def dropped_groups(window: Window) -> tuple[int, int]:
    """Groups dropped as stale between the window's first and last logged step, and the steps
    between them. The count is cumulative since the attempt started: a fall is a new attempt,
    whose count starts again from 0."""
    points = window.ordered("async/dropped_stale")
    dropped = sum(after - before if after >= before else after
                  for (_, before), (_, after) in zip(points, points[1:]))
    return int(round(dropped)), (points[-1][0] - points[0][0]) if points else 0


def queue(window: Window, config: Mapping[str, Any]) -> dict:
    configured = setting(config, "max_inflight_tasks")
    cap_mean = window.mean("async/max_inflight")
    in_flight = window.mean("async/in_flight")
    cap = cap_mean if cap_mean is not None else configured if isinstance(configured, int) else None
    return {"fullness": min(1.0, in_flight / cap) if in_flight is not None and cap else None,
            "in_flight_mean": in_flight,
            "queue_depth_mean": window.mean("async/queue_depth"),
            "max_inflight": configured,
            "cap_mean": cap_mean,
            "blocked_by_inflight_cap": window.mean("async/blocked_by_inflight_cap")}
