"""One comparison of 2 to 8 runs, as the compare API returns it and the compare page draws it:
the runs, their aligned series, the config diff and a summary line per run."""
from runs.compare.diff import config_diff
from runs.compare.fetch import step_bounds
from runs.compare.names import metric_names
from runs.compare.run_settings import field_group, run_settings
from runs.compare.series import X_AXES, compare_series
from runs.compare.summary import REWARD_METRIC, TOKENS_METRIC, run_summaries

# The held-out pass rate beside the training reward: with evaluations, what the runs are judged on.
EVAL_METRIC = "eval/pass@1"
# Runs on an environment also report their episodes (worker/trainer: episode/...); charted by default.
EPISODE_METRICS = ["episode/turns_mean", "episode/tool_error_rate"]
DEFAULT_METRICS = [REWARD_METRIC, EVAL_METRIC, "train/loss", "rollout/completion_length_mean", "train/kl_to_sampler",
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
    bounds = step_bounds([run.pk for run in runs], list(dict.fromkeys([*names, REWARD_METRIC, TOKENS_METRIC])))
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
    reward = (series.get(REWARD_METRIC)
              or compare_series(runs, [REWARD_METRIC], "step", points, bounds)[REWARD_METRIC])
    tokens = (series.get(TOKENS_METRIC)
              or compare_series(runs, [TOKENS_METRIC], "step", SUMMARY_POINTS, bounds)[TOKENS_METRIC])
    return run_summaries(runs, reward, tokens, bounds)
