"""What flows from the rollout worker to the training loop."""
from dataclasses import dataclass, field


@dataclass
class Completion:
    token_ids: list[int]
    logprobs: list[float]       # the sampler's log-prob of each generated token
    text: str
    finish_reason: str          # "stop" or "length" (truncated)


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

    @property
    def completion_tokens(self) -> int:
        return sum(len(c.token_ids) for c in self.completions)
