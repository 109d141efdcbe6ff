"""The clipped surrogate loss with sampler importance correction, and its diagnostics.

Per token t of completion i, with A_i its advantage:
    r      = exp(logp - old_logp)                   PPO ratio against the policy that was current
                                                    when the batch was scored (old_logp = logp
                                                    detached for a single update per batch)
    w      = exp(old_logp - sampler_logp)           how far vLLM's sampling distribution was from
                                                    the trainer's: stale weights, numerics; capped
                                                    (truncate) or tokens beyond the cap dropped (mask)
    loss_t = -min(r A, clip(r, 1-eps, 1+eps_high) A) * w  (+ beta * KL to the reference, k3)
Tokens are then aggregated by loss_type.
"""
from dataclasses import dataclass

import torch
from worker.trainer import metric_names as names

LOSS_TYPES = ("dapo", "grpo", "dr_grpo", "bnpo")


@dataclass
class LossInputs:
    logp: torch.Tensor              # [B, T] log-probs of the completion tokens under the policy (with grad)
    old_logp: torch.Tensor          # [B, T] same, at scoring time (no grad)
    sampler_logp: torch.Tensor      # [B, T] log-probs vLLM reported when sampling
    advantages: torch.Tensor        # [B]
    mask: torch.Tensor              # [B, T] 1 for completion tokens, 0 for padding
    ref_logp: torch.Tensor | None = None  # [B, T] reference model, when beta > 0


@dataclass
class LossSettings:
    loss_type: str = "dapo"
    epsilon: float = 0.2
    epsilon_high: float | None = None
    beta: float = 0.0
    importance_correction: bool = True
    importance_mode: str = "truncate"
    importance_cap: float = 2.0
    max_completion_length: int | None = None  # dr_grpo's constant normalizer


def importance_weights(old_logp, sampler_logp, mode: str, cap: float) -> torch.Tensor:
    ratio = torch.exp(old_logp - sampler_logp)
    if mode == "truncate":
        return torch.clamp(ratio, max=cap)
    if mode == "mask":
        return torch.where(ratio <= cap, ratio, torch.zeros_like(ratio))
    raise ValueError(f"importance_sampling_mode must be truncate or mask, not {mode!r}")


def k3_kl(logp: torch.Tensor, other_logp: torch.Tensor) -> torch.Tensor:
    """Per-token estimate of KL(policy || other), unbiased and never negative."""
    delta = other_logp - logp
    return torch.exp(delta) - delta - 1


def clipped_token_loss(x: LossInputs, s: LossSettings) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-token loss [B, T] and the PPO ratio [B, T] (for the clip diagnostics)."""
    ratio = torch.exp(x.logp - x.old_logp)
    high = s.epsilon if s.epsilon_high is None else s.epsilon_high
    advantages = x.advantages.unsqueeze(1)
    surrogate = torch.min(ratio * advantages, torch.clamp(ratio, 1 - s.epsilon, 1 + high) * advantages)
    loss = -surrogate
    if s.importance_correction:
        loss = loss * importance_weights(x.old_logp, x.sampler_logp, s.importance_mode, s.importance_cap)
    if s.beta > 0:
        if x.ref_logp is None:
            raise ValueError("beta > 0 needs the reference model's log-probs")
        loss = loss + s.beta * k3_kl(x.logp, x.ref_logp)
    return loss, ratio


def aggregate(token_loss: torch.Tensor, mask: torch.Tensor, s: LossSettings,
              tokens_in_batch: float | None = None) -> torch.Tensor:
    """Token losses [B, T] → a scalar, the way each loss_type weighs sequences of different lengths.

    `tokens_in_batch`: for dapo, the completion tokens of the whole optimizer step
    (all micro-batches), so that accumulated micro-batches sum to a token mean.
    """
    masked = token_loss * mask
    if s.loss_type == "grpo":
        return (masked.sum(dim=1) / mask.sum(dim=1).clamp(min=1)).mean()
    if s.loss_type == "bnpo":
        return masked.sum() / mask.sum().clamp(min=1)
    if s.loss_type == "dr_grpo":
        length = s.max_completion_length or mask.shape[1]
        return masked.sum() / (mask.shape[0] * length)
    if s.loss_type == "dapo":
        normalizer = tokens_in_batch if tokens_in_batch is not None else mask.sum().clamp(min=1)
        return masked.sum() / normalizer
    raise ValueError(f"loss_type must be one of {', '.join(LOSS_TYPES)}, not {s.loss_type!r}")


def masked_mean(values: torch.Tensor, mask: torch.Tensor) -> float:
    return ((values * mask).sum() / mask.sum().clamp(min=1)).item()


def diagnostics(x: LossInputs, ratio: torch.Tensor, s: LossSettings) -> dict[str, float]:
    """Clip ratios, importance ratio spread and KL to the sampler, over real tokens only."""
    high = s.epsilon if s.epsilon_high is None else s.epsilon_high
    advantages = x.advantages.unsqueeze(1)
    low_clip = ((ratio < 1 - s.epsilon) & (advantages < 0)).float()
    high_clip = ((ratio > 1 + high) & (advantages > 0)).float()
    is_ratio = torch.exp(x.old_logp - x.sampler_logp)
    real = x.mask.bool()
    picked = is_ratio[real] if real.any() else torch.ones(1)
    return {
        names.TRAIN_CLIP_RATIO_LOW: masked_mean(low_clip, x.mask),
        names.TRAIN_CLIP_RATIO_HIGH: masked_mean(high_clip, x.mask),
        names.TRAIN_CLIP_RATIO_REGION: masked_mean(low_clip + high_clip, x.mask),
        names.TRAIN_KL_TO_SAMPLER: masked_mean(k3_kl(x.old_logp, x.sampler_logp), x.mask),
        names.TRAIN_IMPORTANCE_RATIO_MIN: picked.min().item(),
        names.TRAIN_IMPORTANCE_RATIO_MEAN: picked.mean().item(),
        names.TRAIN_IMPORTANCE_RATIO_MAX: picked.max().item(),
    }


def grpo_loss(x: LossInputs, s: LossSettings, tokens_in_batch: float | None = None):
    """The scalar loss to backpropagate and its diagnostics."""
    token_loss, ratio = clipped_token_loss(x, s)
    loss = aggregate(token_loss, x.mask, s, tokens_in_batch)
    with torch.no_grad():
        metrics = diagnostics(x, ratio.detach(), s)
        if s.beta > 0 and x.ref_logp is not None:  # clipped_token_loss refused beta > 0 without it
            metrics[names.TRAIN_KL_TO_REFERENCE] = masked_mean(k3_kl(x.logp.detach(), x.ref_logp), x.mask)
    return loss, metrics
