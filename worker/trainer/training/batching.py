"""Groups to training tensors, with a prompt's completions packed behind one copy of the prompt.

Packed (share_prompts), a row holds the prompt once and then several completions:

    [p p p p | a a a | b b | c c c c]      positions 0 1 2 3 | 4 5 6 | 4 5 | 4 5 6 7

Each completion attends to the prompt and to itself only (a 4D mask) and its positions continue
from the prompt's. The first token of each completion is predicted from the prompt's last
position, the others from the previous token of the same completion: `sources` says where each
completion token is predicted. Without packing (one completion per row) the mask is the usual 2D
padding mask. Why: docs/capabilities/trainer.md#a-prompt-trained-once-per-group-share_prompts.
"""
from dataclasses import dataclass
from itertools import groupby

import torch

from worker.trainer.rollout.groups import Group


@dataclass
class Row:
    prompt_ids: list[int]
    completion_ids: list[int]
    sampler_logprobs: list[float]
    advantage: float
    group: int = 0  # rows of one group share their prompt
    loss_mask: list[int] | None = None  # an episode's: 0 for the environment's tokens (context only)

    @property
    def length(self) -> int:
        return len(self.prompt_ids) + len(self.completion_ids)


@dataclass
class MicroBatch:
    input_ids: torch.Tensor        # [B, L] packed rows, right-padded
    attention_mask: torch.Tensor   # [B, L] (one completion per row) or [B, 1, L, L] bool (packed)
    position_ids: torch.Tensor     # [B, L]
    sources: torch.Tensor          # [S, T] flat index (b * L + l) of the position predicting each token
    targets: torch.Tensor          # [S, T] completion tokens (0 past a completion's end)
    mask: torch.Tensor             # [S, T] 1 for completion tokens, 0 for padding
    sampler_logp: torch.Tensor     # [S, T] vLLM's log-probs of those tokens
    advantages: torch.Tensor       # [S]
    tokens: int                    # positions run through the model (prompts counted once per row)
    shape_multiple: int = 1        # rows, and positions fed to the head, padded to a multiple of this

    @property
    def completion_tokens(self) -> int:
        return int(self.mask.sum().item())

    def to(self, device) -> "MicroBatch":
        for name in ("input_ids", "attention_mask", "position_ids", "sources", "targets", "mask",
                     "sampler_logp", "advantages"):
            setattr(self, name, getattr(self, name).to(device))
        return self


@dataclass
class PackedRow:
    """One prompt and completions of it, laid out one after another."""
    ids: list[int]
    positions: list[int]
    segments: list[int]            # 0 prompt, j + 1 the j-th completion
    sources: list[list[int]]       # per completion, the index in `ids` predicting each of its tokens
    rows: list[Row]


def pack(rows: list[Row]) -> PackedRow:
    """`rows` (one prompt, at least one completion) as one packed row."""
    prompt = rows[0].prompt_ids
    ids, positions, segments = list(prompt), list(range(len(prompt))), [0] * len(prompt)
    sources = []
    for index, row in enumerate(rows):
        start, length = len(ids), len(row.completion_ids)
        sources.append([len(prompt) - 1] + list(range(start, start + length - 1)))
        ids += row.completion_ids
        positions += range(len(prompt), len(prompt) + length)
        segments += [index + 1] * length
    return PackedRow(ids, positions, segments, sources, rows)


def packing_mask(segments: torch.Tensor) -> torch.Tensor:
    """[B, L] segment ids (-1 padding) → [B, 1, L, L] bool: causal, within the prompt and one's
    own completion. A padding position sees itself only (a row with nothing to attend to
    would give NaN)."""
    length = segments.shape[1]
    causal = torch.ones(length, length, dtype=torch.bool).tril()
    query, key = segments.unsqueeze(2), segments.unsqueeze(1)
    allowed = causal & ((key == 0) | (key == query)) & (key >= 0) & (query >= 0)
    padding_self = (query < 0) & torch.eye(length, dtype=torch.bool)
    return (allowed | padding_self).unsqueeze(1)


def within_window(mask: torch.Tensor, positions: torch.Tensor, window: int) -> torch.Tensor:
    """A packing mask narrowed to sliding-window attention: a query sees keys fewer than
    `window` positions back, counted in each completion's own positions (not packed indices)."""
    distance = positions.unsqueeze(2) - positions.unsqueeze(1)  # [B, L, L] query minus key
    return mask & (distance < window).unsqueeze(1)


def collate(packs: list[PackedRow], pad_id: int, shape_multiple: int = 1) -> MicroBatch:
    """`shape_multiple` > 1 right-pads the rows to a multiple of it (and the policy pads the
    positions it feeds to the vocabulary projection likewise), so that micro-batches repeat a
    few shapes (worker/trainer/training/onednn_cache.py says why that matters on a CPU)."""
    width = -(-max(len(p.ids) for p in packs) // shape_multiple) * shape_multiple
    completions = [(b, row, sources) for b, p in enumerate(packs) for row, sources in zip(p.rows, p.sources)]
    longest = max(len(row.completion_ids) for _, row, _ in completions)
    input_ids = torch.full((len(packs), width), pad_id, dtype=torch.long)
    positions = torch.zeros((len(packs), width), dtype=torch.long)
    segments = torch.full((len(packs), width), -1, dtype=torch.long)
    shape = (len(completions), longest)
    sources, targets = torch.zeros(shape, dtype=torch.long), torch.zeros(shape, dtype=torch.long)
    mask, sampler = torch.zeros(shape), torch.zeros(shape)
    for b, p in enumerate(packs):
        input_ids[b, :len(p.ids)] = torch.tensor(p.ids)
        positions[b, :len(p.ids)] = torch.tensor(p.positions)
        segments[b, :len(p.ids)] = torch.tensor(p.segments)
    for s, (b, row, where) in enumerate(completions):
        n = len(row.completion_ids)
        sources[s, :n] = torch.tensor(where) + b * width
        targets[s, :n] = torch.tensor(row.completion_ids)
        mask[s, :n] = 1 if row.loss_mask is None else torch.tensor(row.loss_mask, dtype=mask.dtype)
        sampler[s, :n] = torch.tensor(row.sampler_logprobs)
    packed = any(len(p.rows) > 1 for p in packs)
    attention = packing_mask(segments) if packed else (segments >= 0).long()
    return MicroBatch(input_ids, attention, positions, sources, targets, mask, sampler,
                      torch.tensor([row.advantage for _, row, _ in completions]),
                      tokens=sum(len(p.ids) for p in packs), shape_multiple=shape_multiple)


def rows_of(groups: list[Group], advantages: torch.Tensor) -> list[Row]:
    rows, i = [], 0
    for index, group in enumerate(groups):
        for completion in group.completions:
            rows.append(Row(group.prompt_ids, completion.token_ids, completion.logprobs, float(advantages[i]), index,
                            loss_mask=completion.loss_mask))
            i += 1
    return rows


def micro_batches(rows: list[Row], size: int, pad_id: int, share_prompts: bool = True,
                  shape_multiple: int = 1) -> list[MicroBatch]:
    """Micro-batches of `size` completions. Sharing prompts, a micro-batch's completions of one
    group are packed into one row (groups are kept together, longest completions last);
    otherwise rows are sorted by length so that padding stays small."""
    if not share_prompts:
        ordered = sorted(rows, key=lambda row: row.length)
        return [collate([pack([row]) for row in ordered[i:i + size]], pad_id, shape_multiple)
                for i in range(0, len(ordered), size)]
    ordered = sorted(rows, key=lambda row: (row.group, len(row.completion_ids)))
    batches = []
    for i in range(0, len(ordered), size):
        chunk = ordered[i:i + size]
        packs = [pack(list(same)) for _, same in groupby(chunk, key=lambda row: row.group)]
        batches.append(collate(packs, pad_id, shape_multiple))
    return batches
