"""Metrics of a batch of groups: rewards in total and per function, lengths, truncation, and for
episodes their turns, tool calls, tool errors, tokens and why they ended."""
import math
import statistics
from collections import Counter

from worker.trainer.rollout.groups import Group
from worker.trainer import metric_names as names


def _mean_std(values: list[float]) -> tuple[float, float]:
    if not values:
        return 0.0, 0.0
    return statistics.fmean(values), statistics.pstdev(values) if len(values) > 1 else 0.0


def rollout_metrics(groups: list[Group]) -> dict[str, float]:
    totals = [t for g in groups for t in g.totals if math.isfinite(t)]  # a failed episode has none
    lengths = [len(c.token_ids) for g in groups for c in g.completions]
    truncated = [c.finish_reason == "length" for g in groups for c in g.completions]
    mean, std = _mean_std(totals)
    metrics = {
        names.ROLLOUT_REWARD_MEAN: mean, names.ROLLOUT_REWARD_STD: std,
        names.ROLLOUT_COMPLETION_LENGTH_MEAN: statistics.fmean(lengths),
        names.ROLLOUT_COMPLETION_LENGTH_MIN: min(lengths), names.ROLLOUT_COMPLETION_LENGTH_MAX: max(lengths),
        names.ROLLOUT_CLIPPED_RATIO: sum(truncated) / len(truncated),
    }
    for name in groups[0].rewards:
        applicable = [v for g in groups for v in g.rewards[name] if v is not None]
        fn_mean, fn_std = _mean_std(applicable)
        metrics[names.ROLLOUT_REWARD_FN_MEAN.name(reward=name)] = fn_mean
        metrics[names.ROLLOUT_REWARD_FN_STD.name(reward=name)] = fn_std
    metrics.update(episode_metrics(groups))
    return metrics


END_REASONS = ("done", "max_turns", "max_tokens", "context", "environment_error", "environment_timeout")


def episode_metrics(groups: list[Group]) -> dict[str, float]:
    episodes = [c.episode for g in groups for c in g.completions if c.episode is not None]
    if not episodes:
        return {}
    calls = sum(e.tool_calls for e in episodes)
    ended = Counter(e.end_reason for e in episodes)
    lengths = [len(c.token_ids) for g in groups for c in g.completions if c.episode is not None]
    return {names.EPISODE_TURNS_MEAN: statistics.fmean(e.assistant_turns for e in episodes),
            names.EPISODE_TOOL_CALLS_MEAN: calls / len(episodes),
            names.EPISODE_TOOL_ERROR_RATE: sum(e.tool_errors for e in episodes) / calls if calls else 0.0,
            names.EPISODE_TOKENS_MEAN: statistics.fmean(lengths),
            # Called a tool and every call worked: the correct-tool-use rate the calculator learns.
            names.EPISODE_CLEAN_TOOL_USE: statistics.fmean(e.tool_calls > 0 and not e.tool_errors for e in episodes),
            **{names.EPISODE_END.name(reason=reason): ended[reason] / len(episodes) for reason in END_REASONS}}


def sample_records(groups: list[Group], advantages: list[float], kept: list[int], current_version: int) -> list[dict]:
    """The groups at the indices `kept` (rollout/sample_keeping.py) as sample records for the run
    page (worker.trainer.events.SampleRecord), each with its place in the step as `group`."""
    starts = [0]
    for group in groups:
        starts.append(starts[-1] + len(group.completions))
    return [_record(index, groups[index], i, advantages[starts[index] + i], current_version)
            for index in kept for i in range(len(groups[index].completions))]


def _record(index: int, group: Group, i: int, advantage: float, current_version: int) -> dict:
    completion, total = group.completions[i], group.totals[i]
    return {
        "group": index, "prompt": group.prompt_text, "completion": completion.text,
        "rewards": {name: values[i] for name, values in group.rewards.items()},
        "total_reward": total if math.isfinite(total) else None, "advantage": advantage,
        "model_version": group.model_version, "staleness": current_version - group.model_version,
        "num_tokens": len(completion.token_ids), "finish_reason": completion.finish_reason,
        **({"turns": completion.episode.turns, "end_reason": completion.episode.end_reason}
           if completion.episode else {}),
        **({"judgements": {name: answers[i] for name, answers in group.explanations.items()}}
           if group.explanations else {}),
    }
