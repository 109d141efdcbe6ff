"""Which part of the pipeline holds a run back, from its time split and rollout metrics.

The trainer waiting for rollouts is time generation (or scoring) could have saved: above
WAIT_SHARE of a step, the generation side is the bottleneck. Weight sync and evaluation are named
above the same share; training where it takes most of a step and the trainer hardly waits.
Anything else is balanced (no one change would shorten a step much), unless the logged parts do not
explain the step: none of them logged, or the rest ("other") above UNEXPLAINED_SHARE of it; then no
bottleneck is named (None) rather than guessed.
"""
from collections.abc import Mapping
from typing import Any

from runs.diagnosis.run_config import ahead_bound, setting
from runs.diagnosis.time_split import OTHER, PARTS, TimeSplit
from runs.diagnosis.window import Window
from worker.trainer.metric_names import (
    ASYNC_AHEAD_BOUND,
    ROLLOUT_GROUP_GENERATION_S,
    ROLLOUT_GROUP_SCORING_S,
    SYSTEM_TRAIN_SECONDS_BESIDE_GENERATION,
)

WAIT_SHARE = 0.25  # waiting for rollouts, weight sync or evaluation: a bottleneck above this share
TRAINING_SHARE = 0.5  # training: a bottleneck above this share ...
SMALL_WAIT = 0.10  # ... while the trainer waits less than this share for rollouts
UNEXPLAINED_SHARE = 0.5  # time the logged parts do not explain: above this share, no bottleneck is named
HELD_BACK = 0.3  # a bound that stopped this share of submit polls or more held submission back
NEAR_CAP = 0.9  # in flight at this share of the cap: the cap held (older runs, without the blocked shares)
BOTTLENECKS = ("generation", "scoring", "training", "weight_sync", "evaluation", "balanced")
SIDES = {"waiting_for_rollouts": "generation", "weight_sync": "weight_sync", "evaluation": "evaluation"}


def bottleneck_of(split: TimeSplit, window: Window) -> str | None:
    shares = {part: split.share(part) for part in SIDES}
    big = {part: share for part, share in shares.items() if share > WAIT_SHARE}
    if big:
        side = SIDES[max(big, key=big.__getitem__)]
        return "scoring" if side == "generation" and scoring_dominates(window) else side
    if split.share("training") > TRAINING_SHARE and shares["waiting_for_rollouts"] < SMALL_WAIT:
        return "training"
    return None if unexplained(split, window) else "balanced"


def unexplained(split: TimeSplit, window: Window) -> bool:
    """The logged parts do not explain the step time: none was logged, the steps logged no time, or
    the rest of the step is most of it."""
    logged_none = not any(window.has(metric) for metric in PARTS.values())
    return logged_none or split.step_seconds <= 0 or split.share(OTHER) > UNEXPLAINED_SHARE


def scoring_dominates(window: Window) -> bool:
    """Scoring a group took longer than generating it (where the run logged both)."""
    scoring, generation = window.mean(ROLLOUT_GROUP_SCORING_S), window.mean(ROLLOUT_GROUP_GENERATION_S)
    return scoring is not None and generation is not None and scoring > generation


def bound_that_held(queue: Mapping[str, Any], staleness: Mapping[str, Any], ahead: int) -> str | None:
    """"inflight_cap" or "staleness" where that bound held submission back, else None. `ahead`:
    the staleness bound in groups ahead of the trainer (staleness_bound)."""
    blocked = {"inflight_cap": queue["blocked_by_inflight_cap"], "staleness": staleness["blocked_by_staleness"]}
    known = {bound: share for bound, share in blocked.items() if share is not None}
    if not known:
        return bound_near_its_limit(queue, ahead)
    bound = max(known, key=known.__getitem__)
    return bound if known[bound] >= HELD_BACK else None


def bound_near_its_limit(queue: Mapping[str, Any], ahead: int) -> str | None:
    """Runs from before the blocked shares were logged: the cap held where the groups in flight ran
    near it, the staleness bound where those in flight and queued ran near it."""
    in_flight, queued = queue["in_flight_mean"], queue["queue_depth_mean"] or 0.0
    if in_flight is None:
        return None
    if (queue["fullness"] or 0.0) >= NEAR_CAP:
        return "inflight_cap"
    return "staleness" if in_flight + queued >= NEAR_CAP * ahead else None


def staleness_bound(window: Window, config: Mapping[str, Any]) -> int:
    """The staleness bound in groups ahead of the trainer, as the trainer logged it, or derived
    from the config (runs before async/ahead_bound)."""
    logged = window.mean(ASYNC_AHEAD_BOUND)
    return round(logged) if logged is not None else ahead_bound(config)


def device_of(window: Window, config: Mapping[str, Any]) -> str | None:
    """"cpu" or "gpu" where the config or the metrics tell (the control plane does not record the
    worker's devices); None where they do not."""
    if setting(config, "cpu_sharing") in ("split_cores", "take_turns") or window.has(
            SYSTEM_TRAIN_SECONDS_BESIDE_GENERATION):
        return "cpu"
    gpus = setting(config, "vllm_tensor_parallel_size") * setting(config, "vllm_data_parallel_size")
    if (setting(config, "weight_sync_backend") == "nccl" or gpus > 1 or setting(config, "judge_gpus")
            or "gpu" in str(setting(config, "worker_pool")).lower()):
        return "gpu"
    return None
