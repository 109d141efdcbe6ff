"""One comparison of 2 to 8 runs, as the compare API returns it and the compare page draws it:
the runs, their aligned series, the config diff and a summary line per run."""
from runs.compare.diff import config_diff
from runs.compare.fetch import step_bounds
from runs.compare.names import metric_names
from runs.compare.run_settings import field_group, run_settings
from runs.compare.series import X_AXES, compare_series
from runs.compare.summary import run_summaries
from worker.trainer.metric_names import (
    EPISODE_TOOL_ERROR_RATE,
    EPISODE_TURNS_MEAN,
    EVAL_PASS_AT_1,
    ROLLOUT_COMPLETION_LENGTH_MEAN,
    ROLLOUT_REWARD_MEAN,
    SYSTEM_GENERATION_TOKENS_PER_S,
    TRAIN_KL_TO_SAMPLER,
    TRAIN_LOSS,
)

# Runs on an environment also report their episodes (worker/trainer: episode/...); charted by default.
EPISODE_METRICS = [EPISODE_TURNS_MEAN, EPISODE_TOOL_ERROR_RATE]
# The training reward, and beside it the held-out pass rate: with evaluations, what the runs are judged on.
DEFAULT_METRICS = [ROLLOUT_REWARD_MEAN, EVAL_PASS_AT_1, TRAIN_LOSS, ROLLOUT_COMPLETION_LENGTH_MEAN, TRAIN_KL_TO_SAMPLER,
                   *EPISODE_METRICS]
FIRST_FEW = 5  # charted when the runs have none of the usual metrics
DEFAULT_POINTS = 500
# The summary's throughput is a mean; this many points per run estimate it well enough.
SUMMARY_POINTS = 200


def chosen_metrics(asked: list[str], available: list[str]) -> list[str]:
    """The metrics asked for; without any, the usual GRPO ones the runs have (or the first few)."""
    if asked:
        return asked
    usual = [name for name in DEFAULT_METRICS if name in available]
    return usual or available[:FIRST_FEW]


def build_comparison(runs: list, asked_metrics: list[str], x_axis: str, points: int) -> dict:
    available = metric_names([run.pk for run in runs])
    names = chosen_metrics(asked_metrics, available)
    # One read of every series' first and last points, the summary's metrics included.
    summarised = [ROLLOUT_REWARD_MEAN, SYSTEM_GENERATION_TOKENS_PER_S]
    bounds = step_bounds([run.pk for run in runs], list(dict.fromkeys([*names, *summarised])))
    series = compare_series(runs, names, x_axis, points, bounds)
    return {
        "x": x_axis,
        "x_label": X_AXES[x_axis],
        "points": points,
        "runs": [run_identity(run) for run in runs],
        "available_metrics": available,
        "metrics": names,
        "series": {name: metric.joined() for name, metric in series.items()},
        "config_diff": settings_diff(runs),
        "summary": _summaries(runs, series, points, bounds),
    }


def run_identity(run) -> dict:
    return {"id": run.pk, "name": run.name, "owner": run.owner.username, "status": run.status,
            "url": f"/runs/{run.pk}/"}


def settings_diff(runs: list) -> dict:
    diff = config_diff({str(run.pk): run_settings(run) for run in runs})
    for entry in diff["differing"] + diff["equal"]:
        entry["group"] = field_group(entry["field"])
    return diff


def _summaries(runs: list, series: dict, points: int, bounds: dict) -> list[dict]:
    reward = _series(runs, series, ROLLOUT_REWARD_MEAN, points, bounds)
    tokens = _series(runs, series, SYSTEM_GENERATION_TOKENS_PER_S, SUMMARY_POINTS, bounds)
    return run_summaries(runs, reward, tokens, bounds)


def _series(runs: list, series: dict, name: str, points: int, bounds: dict):
    """The metric's series as the comparison already fetched it, or else read now."""
    return series.get(name) or compare_series(runs, [name], "step", points, bounds)[name]
