"""Scores a group with every reward function; a function that fails gives None for that group."""
import math
import threading
import time
from dataclasses import dataclass
from collections.abc import Callable

from worker.trainer.rollout.groups import Group


@dataclass
class RewardFunction:
    name: str
    weight: float
    fn: Callable[..., list]
    # An environment's own rubric (a verifiers environment's) is also given `environment_states`:
    # what the environment kept of each episode (EpisodeRecord.environment_state). No other
    # function is: a state is no JSON for the sandbox that code rewards run in.
    reads_environment_states: bool = False
    # Checked pass/fail (accuracy, exact match): a judge's disagreement is measured against it.
    verifier: bool = False
    # A judge's: its reward at or above this is the judge paying (None: not a judge).
    pass_threshold: float | None = None
    # What the function measured of itself since last asked (a judge's calls, latency, tokens,
    # cost): metric name suffix → value, reported as judge/<name>/<suffix>.
    take_metrics: Callable[[], dict[str, float]] | None = None
    # A judge or reward model is also given `task_prompts`: the task's prompt as the dataset has it
    # (Group.task_prompt), not the policy's chat-rendered text. Code rewards' signature is unchanged.
    reads_task_prompts: bool = False


class RewardError(ValueError):
    pass


class Explained(list):
    """A reward's values with each completion's explanation (a judge's raw answer, None where it
    gave none): the scorer keeps the explanations beside the rewards, for the completion browser."""

    def __init__(self, values, explanations):
        super().__init__(values)
        self.explanations = list(explanations)


def _checked(name: str, values, count: int) -> list[float | None]:
    if not isinstance(values, (list, tuple)):
        raise RewardError(f"reward {name!r} returned {type(values).__name__}, expected a list")
    if len(values) != count:
        raise RewardError(f"reward {name!r} returned {len(values)} values for {count} completions")
    checked: list[float | None] = []
    for value in values:
        if value is None:
            checked.append(None)
        elif isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
            checked.append(float(value))
        else:
            raise RewardError(f"reward {name!r} returned {value!r}; each value must be a finite number or None")
    return checked


class Scorer:
    """Thread-safe: the rollout worker scores several groups at once (rollout/worker.py)."""

    def __init__(self, functions: list[RewardFunction], on_error: Callable[[str, str], None]):
        self.functions, self.on_error = functions, on_error
        self.seconds_by_function: dict[str, float] = {f.name: 0.0 for f in functions}
        self._seconds_lock = threading.Lock()

    def score(self, group: Group) -> None:
        count = len(group.completions)
        prompts = [group.prompt_text] * count
        task_prompts = [group.prompt_text if group.task_prompt is None else group.task_prompt] * count
        completions = [c.text for c in group.completions]
        columns = {key: [value] * count for key, value in group.columns.items()}
        columns.update(episode_columns(group))
        lengths = [len(c.token_ids) for c in group.completions]
        states = [c.episode.environment_state if c.episode else None for c in group.completions]
        for function in self.functions:
            started = time.perf_counter()
            extra: dict[str, list] = {"environment_states": states} if function.reads_environment_states else {}
            if function.reads_task_prompts:
                extra["task_prompts"] = task_prompts
            try:
                scored = function.fn(prompts, completions, completion_lengths=lengths, **columns, **extra)
                values = _checked(function.name, scored, count)
                if isinstance(scored, Explained):
                    group.explanations[function.name] = scored.explanations
            except Exception as exc:  # a user's reward must never stop the run
                self.on_error(function.name, f"{type(exc).__name__}: {exc}")
                values = [None] * count
            with self._seconds_lock:
                self.seconds_by_function[function.name] += time.perf_counter() - started
            group.rewards[function.name] = values
        failed = [c.episode is not None and c.episode.failed for c in group.completions]
        for name in group.rewards:  # an episode the environment failed has no reward to give
            group.rewards[name] = [None if failed[i] else v for i, v in enumerate(group.rewards[name])]
        group.totals = [math.nan if failed[i] else self._total(group, i) for i in range(count)]

    def _total(self, group: Group, index: int) -> float:
        """The weighted sum of one completion's rewards; a function that gave None adds nothing."""
        values = ((f.weight, group.rewards[f.name][index]) for f in self.functions)
        return sum(weight * value for weight, value in values if value is not None)


def episode_columns(group: Group) -> dict[str, list]:
    """What a rubric reads of each episode beyond its final answer: the whole conversation
    (trajectories), its tool calls and assistant turns. Nothing for one-shot completions."""
    episodes = [c.episode for c in group.completions]
    if not any(episodes):
        return {}
    return {"trajectories": [e.turns if e else [] for e in episodes],
            "tool_calls": [e.tool_calls if e else 0 for e in episodes],
            "assistant_turns": [e.assistant_turns if e else 1 for e in episodes]}
