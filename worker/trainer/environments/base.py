"""What an environment is to the episode runner (episodes.py): the first messages, a reply to
each assistant turn (replies.py says what a reply may be), the tools it offers, and rewards of
its own that join the rubric.

Each episode is played through an Episode the environment makes for it: by default every turn
is the environment's step(messages, row), keeping nothing between turns; an environment that
keeps state per episode (a verifiers rollout's) makes its own."""
from collections.abc import Callable
from dataclasses import dataclass

from worker.trainer.environments.tool_calls import tool_schema
from worker.trainer.rollout.scoring import RewardFunction


@dataclass(frozen=True)
class Tool:
    """A tool: what the chat template is told (hermes) and what the text format names. The text
    format fills one argument, `parameter`; `schema` (an OpenAI function tool) describes a tool
    of several arguments, which only the hermes format can call."""
    name: str
    description: str
    parameter: str
    parameter_description: str
    schema: dict | None = None

    def as_schema(self) -> dict:
        """The tool as chat templates take `tools`."""
        return self.schema or tool_schema(self.name, self.description, self.parameter, self.parameter_description)


@dataclass(frozen=True)
class ExtraReward:
    """A reward the environment adds to the rubric: score(tool_calls, assistant_turns) of an episode."""
    name: str
    score: Callable[[int, int], float]


class Environment:
    tools: tuple[Tool, ...] = ()

    def start(self, row: dict, prompt) -> list[dict]:
        """The episode's first messages; by default the dataset's prompt."""
        return prompt_messages(prompt)

    def step(self, messages: list[dict], row: dict):
        """The reply to the last assistant message, or None when the episode is done."""
        raise NotImplementedError

    def episode(self, row: dict) -> "Episode":
        """What plays one episode of `row`. Called on the event loop: it must not block."""
        return Episode(self, row)

    def extra_rewards(self) -> list[ExtraReward]:
        return []

    def reward_functions(self) -> list[RewardFunction]:
        """Rubric functions of the environment's own, scored with the run's rewards (a verifiers
        environment's rubric)."""
        return []

    def close(self) -> None:
        """Releases what the environment holds (a sandbox process, say)."""


class Episode:
    """One episode as its environment plays it. step() and end() run in worker threads while the
    other episodes of the group play theirs; end() comes once, after the last step, or after the
    runner stopped waiting for one (environment_timeout_s), which may then still be running."""

    def __init__(self, environment: Environment, row: dict):
        self.environment, self.row = environment, row

    def step(self, messages: list[dict]):
        """The reply to the last assistant message, or None when the episode is done."""
        return self.environment.step(messages, self.row)

    def end(self, reason: str):
        """The episode is over, for `reason` (episodes.py's end reasons). Answers what the
        environment's own rubric reads of it (RewardFunction.reads_environment_states), or None."""
        return None


def prompt_messages(prompt) -> list[dict]:
    """A dataset prompt (text, or chat messages) as chat messages."""
    if isinstance(prompt, str):
        return [{"role": "user", "content": prompt}]
    return [dict(message) for message in prompt]
