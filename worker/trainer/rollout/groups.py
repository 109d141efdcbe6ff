"""What flows from the rollout worker to the training loop."""
from dataclasses import dataclass, field


def task_prompt_text(prompt) -> str:
    """A dataset's prompt as a judge reads it: a string as it is; chat messages (a list of
    {"role", "content"}) as "role: content" lines, without the policy's chat template."""
    if isinstance(prompt, str):
        return prompt
    if isinstance(prompt, (list, tuple)) and all(isinstance(m, dict) for m in prompt):
        return "\n".join(f"{m.get('role', 'user')}: {_content_text(m.get('content'))}" for m in prompt)
    return str(prompt)


def _content_text(content) -> str:
    """A message's content: a string, or the text parts of a list of parts (OpenAI's format)."""
    if content is None:
        return ""
    if isinstance(content, list):
        return " ".join(str(part.get("text", "")) if isinstance(part, dict) else str(part) for part in content)
    return str(content)


@dataclass
class Completion:
    token_ids: list[int]
    logprobs: list[float]       # the sampler's log-prob of each generated token
    text: str
    finish_reason: str          # "stop" or "length" (truncated)
    # An episode of a multi-turn rollout (environments/episodes.py): its environment tokens are
    # in token_ids too, masked out of the loss (0 in loss_mask); None: every token is trained.
    loss_mask: list[int] | None = None
    episode: "EpisodeRecord | None" = None


@dataclass
class EpisodeRecord:
    """What an episode was, beyond its tokens: the conversation and how it went."""
    turns: list[dict]           # worker.trainer.events.SampleTurn as dicts
    end_reason: str             # done, max_turns, max_tokens, context, environment_error, environment_timeout
    tool_calls: int = 0
    tool_errors: int = 0
    assistant_turns: int = 0
    failed: bool = False        # the environment failed: no reward, no gradient
    # What the environment kept of the episode for its own rubric (a verifiers rollout's state);
    # it stays in this process: never reported.
    environment_state: object = None


@dataclass
class Group:
    """`num_generations` completions of one prompt, sampled with weights of `model_version`."""
    prompt_index: int
    prompt_text: str
    prompt_ids: list[int]
    columns: dict
    completions: list[Completion]
    model_version: int
    rewards: dict[str, list[float | None]] = field(default_factory=dict)  # per function, per completion
    totals: list[float] = field(default_factory=list)
    # Per judge, per completion: its raw answer (rollout/scoring.py Explained); sampled with the group.
    explanations: dict[str, list[str | None]] = field(default_factory=dict)
    # The task's prompt as the dataset has it (task_prompt_text), which judges and reward models
    # read instead of prompt_text, the policy's chat-rendered text; None: prompt_text is all there is.
    task_prompt: str | None = None

    @property
    def completion_tokens(self) -> int:
        return sum(len(c.token_ids) for c in self.completions)
