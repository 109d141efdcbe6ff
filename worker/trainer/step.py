"""One optimizer step on a batch of scored groups."""
import time
from contextlib import nullcontext
from dataclasses import dataclass
from typing import TYPE_CHECKING
from collections.abc import Callable

import torch

from worker.trainer.algorithm.advantages import group_advantages
from worker.trainer.algorithm.loss import LossInputs, LossSettings, grpo_loss
from worker.trainer.batching import micro_batches, rows_of
from worker.trainer.lora import reference_forward
from worker.trainer.policy import completion_logprobs
from worker.trainer.rollout.groups import Group

if TYPE_CHECKING:
    from accelerate import Accelerator


@dataclass(kw_only=True)
class StepContext:
    """What one optimizer step needs: the parts that train and the config's step settings."""
    model: torch.nn.Module
    optimizer: torch.optim.Optimizer
    scheduler: torch.optim.lr_scheduler.LRScheduler
    accelerator: "Accelerator"
    loss_settings: LossSettings
    num_generations: int
    scale_rewards: str
    micro_batch_size: int
    max_grad_norm: float
    temperature: float
    pad_id: int
    ref_model: torch.nn.Module | None = None  # for the KL term (beta > 0); with LoRA, the policy
    share_prompts: bool = True  # pack a group's completions behind one prompt (batching.py)
    shape_multiple: int = 1     # pad rows and head positions to a multiple of this (onednn_cache.py)
    # Called before each micro-batch: the cores split with vLLM (inference/cpu_sharing.py).
    before_micro_batch: Callable[[], None] | None = None


def loss_settings_of(config) -> LossSettings:
    return LossSettings(
        loss_type=config.loss_type, epsilon=config.epsilon, epsilon_high=config.epsilon_high, beta=config.beta,
        importance_correction=config.importance_sampling_correction,
        importance_mode=config.importance_sampling_mode, importance_cap=config.importance_sampling_cap,
        max_completion_length=config.max_completion_length,
    )


def _ref_logp(ctx: StepContext, batch):
    if ctx.ref_model is None:
        return None
    with torch.no_grad(), reference_forward(ctx.ref_model):
        return completion_logprobs(ctx.ref_model, batch, ctx.temperature)[0]


def batch_advantages(groups: list[Group], num_generations: int, scale: str):
    totals = torch.tensor([t for g in groups for t in g.totals], dtype=torch.float32)
    return group_advantages(totals, num_generations, scale)


def train_step(ctx: StepContext, groups: list[Group], advantages) -> dict[str, float]:
    started = time.perf_counter()
    batches = micro_batches(rows_of(groups, advantages.values), ctx.micro_batch_size, ctx.pad_id,
                            share_prompts=ctx.share_prompts, shape_multiple=ctx.shape_multiple)
    step_tokens = sum(b.completion_tokens for b in batches)
    sums: dict[str, float] = {}
    loss_total, entropy_total = 0.0, 0.0
    ctx.model.train()
    for index, batch in enumerate(batches):
        if ctx.before_micro_batch is not None:
            ctx.before_micro_batch()
        batch = batch.to(ctx.accelerator.device)
        last = index == len(batches) - 1
        sync = ctx.accelerator.no_sync(ctx.model) if not last else nullcontext()
        with sync, ctx.accelerator.autocast():
            logp, entropy = completion_logprobs(ctx.model, batch, ctx.temperature, with_entropy=True)
            inputs = LossInputs(logp=logp, old_logp=logp.detach(), sampler_logp=batch.sampler_logp,
                                advantages=batch.advantages, mask=batch.mask, ref_logp=_ref_logp(ctx, batch))
            loss, diagnostics = grpo_loss(inputs, ctx.loss_settings, tokens_in_batch=_normalizer(ctx, step_tokens))
            if ctx.loss_settings.loss_type != "dapo":
                loss = loss / len(batches)  # the others average per micro-batch
            ctx.accelerator.backward(loss)
        weight = batch.completion_tokens / max(step_tokens, 1)
        loss_total += loss.item()
        entropy_total += entropy * weight
        _accumulate(sums, diagnostics, weight)
    grad_norm = _clip(ctx)
    ctx.optimizer.step()
    ctx.scheduler.step()
    ctx.optimizer.zero_grad(set_to_none=True)
    seconds = time.perf_counter() - started
    tokens = sum(b.tokens for b in batches)
    return {
        **sums, "train/loss": loss_total, "train/entropy": entropy_total, "train/grad_norm": grad_norm,
        "train/learning_rate": ctx.scheduler.get_last_lr()[0], "train/advantage_std": advantages.values.std().item(),
        "rollout/frac_reward_zero_std": advantages.frac_zero_std,
        "system/train_seconds": seconds, "system/training_tokens_per_s": tokens / seconds,
    }


def _normalizer(ctx: StepContext, step_tokens: int) -> float | None:
    return float(step_tokens) if ctx.loss_settings.loss_type == "dapo" else None


def _accumulate(sums: dict, diagnostics: dict, weight: float) -> None:
    for name, value in diagnostics.items():
        if name.endswith("_min"):
            sums[name] = min(sums.get(name, value), value)
        elif name.endswith("_max"):
            sums[name] = max(sums.get(name, value), value)
        else:
            sums[name] = sums.get(name, 0.0) + value * weight


def _clip(ctx: StepContext) -> float:
    if ctx.max_grad_norm and ctx.max_grad_norm > 0:
        return float(ctx.accelerator.clip_grad_norm_(ctx.model.parameters(), ctx.max_grad_norm))
    norms = [p.grad.detach().norm() for p in ctx.model.parameters() if p.grad is not None]
    return float(torch.norm(torch.stack(norms))) if norms else 0.0
