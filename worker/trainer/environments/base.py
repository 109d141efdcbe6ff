"""What an environment is to the episode runner (episodes.py): the first messages, a reply to
each assistant turn (replies.py says what a reply may be), the tools it offers, and rewards of
its own that join the rubric."""
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Tool:
    """A one-argument tool: what the chat template is told (hermes) and what the text format names."""
    name: str
    description: str
    parameter: str
    parameter_description: str


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

    def extra_rewards(self) -> list[ExtraReward]:
        return []

    def close(self) -> None:
        """Releases what the environment holds (a sandbox process, say)."""


def prompt_messages(prompt) -> list[dict]:
    """A dataset prompt (text, or chat messages) as chat messages."""
    if isinstance(prompt, str):
        return [{"role": "user", "content": prompt}]
    return [dict(message) for message in prompt]
