"""Rewards to advantages: weighted sum over reward functions, then normalized within each group."""
from dataclasses import dataclass

import torch

STD_FLOOR = 1e-4  # keeps a group whose rewards are all equal from dividing by zero


def combine_rewards(per_function: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    """[N, F] rewards (NaN = the function does not apply) and [F] weights → [N] totals.

    As in TRL, a function that does not apply adds nothing; a completion that no
    function applies to scores 0.
    """
    return torch.nansum(per_function * weights.unsqueeze(0), dim=1)


@dataclass
class Advantages:
    values: torch.Tensor          # [N]
    group_mean: torch.Tensor      # [N / G]
    group_std: torch.Tensor       # [N / G]
    frac_zero_std: float          # share of groups whose rewards are all equal (no signal)


def group_advantages(rewards: torch.Tensor, group_size: int, scale: str = "group") -> Advantages:
    """Advantage of each completion against the others sampled for the same prompt.

    `rewards` is [N] with groups contiguous (N a multiple of group_size). `scale`:
    "group" divides by the group's std, "batch" by the whole batch's, "none" leaves
    the centred reward (Dr. GRPO's argument against per-group scaling).
    """
    if rewards.numel() % group_size:
        raise ValueError(f"{rewards.numel()} rewards do not split into groups of {group_size}")
    grouped = rewards.view(-1, group_size)
    # NaN: an episode with no reward (its environment failed): left out of its group's mean and
    # std, and given no advantage, so it adds nothing to the gradient.
    valid = ~torch.isnan(grouped)
    counted = valid.sum(dim=1).clamp(min=1)
    mean = torch.where(valid, grouped, 0.0).sum(dim=1) / counted
    centred = torch.where(valid, grouped - mean.unsqueeze(1), 0.0)
    std = ((centred ** 2).sum(dim=1) / (counted - 1).clamp(min=1)).sqrt()
    if scale == "group":
        centred = centred / (std.unsqueeze(1) + STD_FLOOR)
    elif scale == "batch":
        centred = centred / (rewards[~torch.isnan(rewards)].std() + STD_FLOOR)
    elif scale != "none":
        raise ValueError(f"scale_rewards must be group, batch or none, not {scale!r}")
    frac_zero = (std < STD_FLOOR).float().mean().item()
    return Advantages(values=centred.reshape(-1), group_mean=mean, group_std=std, frac_zero_std=frac_zero)
