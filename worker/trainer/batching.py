"""Groups to training tensors: one row per completion, sorted by length so padding stays small."""
from dataclasses import dataclass

import torch

from worker.trainer.rollout.groups import Group


@dataclass
class Row:
    prompt_ids: list[int]
    completion_ids: list[int]
    sampler_logprobs: list[float]
    advantage: float

    @property
    def length(self) -> int:
        return len(self.prompt_ids) + len(self.completion_ids)


@dataclass
class MicroBatch:
    input_ids: torch.Tensor        # [B, L] prompt + completion, right-padded
    attention_mask: torch.Tensor   # [B, L]
    target_mask: torch.Tensor      # [B, L-1] 1 where position t predicts a completion token t+1
    sampler_logp: torch.Tensor     # [B, L-1] vLLM's log-probs at those positions
    advantages: torch.Tensor       # [B]

    @property
    def completion_tokens(self) -> int:
        return int(self.target_mask.sum().item())

    @property
    def tokens(self) -> int:
        return int(self.attention_mask.sum().item())


def rows_of(groups: list[Group], advantages: torch.Tensor) -> list[Row]:
    rows, i = [], 0
    for group in groups:
        for completion in group.completions:
            rows.append(Row(group.prompt_ids, completion.token_ids, completion.logprobs, float(advantages[i])))
            i += 1
    return rows


def collate(rows: list[Row], pad_id: int) -> MicroBatch:
    width = max(row.length for row in rows)
    batch = len(rows)
    input_ids = torch.full((batch, width), pad_id, dtype=torch.long)
    attention = torch.zeros((batch, width), dtype=torch.long)
    target_mask = torch.zeros((batch, width - 1))
    sampler = torch.zeros((batch, width - 1))
    for i, row in enumerate(rows):
        prompt, completion = len(row.prompt_ids), len(row.completion_ids)
        input_ids[i, :row.length] = torch.tensor(row.prompt_ids + row.completion_ids)
        attention[i, :row.length] = 1
        # Position t predicts token t+1: completion tokens are predicted from prompt-1 onwards.
        target_mask[i, prompt - 1:prompt - 1 + completion] = 1
        sampler[i, prompt - 1:prompt - 1 + completion] = torch.tensor(row.sampler_logprobs)
    return MicroBatch(input_ids, attention, target_mask, sampler, torch.tensor([row.advantage for row in rows]))


def micro_batches(rows: list[Row], size: int, pad_id: int) -> list[MicroBatch]:
    ordered = sorted(rows, key=lambda row: row.length)
    return [collate(ordered[i:i + size], pad_id) for i in range(0, len(ordered), size)]
