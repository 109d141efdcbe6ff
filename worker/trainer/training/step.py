"""One optimizer step on a batch of scored groups, in one process or shared among several.

With N processes each trains every N-th micro-batch of the step, normalised by the whole
step's micro-batches and tokens; the processes' gradients are averaged when reduced, so each
loss is scaled by N first: the reduced gradient is then the one a single process computes.
"""
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING
from collections.abc import Callable

import torch

from worker.trainer.algorithm.advantages import group_advantages
from worker.trainer.algorithm.loss import LossInputs, LossSettings, grpo_loss
from worker.trainer.training.batching import micro_batches, rows_of
from worker.trainer.distributed.sharding import full_tensor, gradient_sync, summed_over_processes
from worker.trainer.distributed.topology import SINGLE, Topology
from worker.trainer.training.lora import reference_forward
from worker.trainer.training.policy import step_logprobs
from worker.trainer.rollout.groups import Group
from worker.trainer import metric_names as names

if TYPE_CHECKING:
    from accelerate import Accelerator


@dataclass(kw_only=True)
class StepContext:
    """What one optimizer step needs: the parts that train and the config's step settings."""
    model: torch.nn.Module  # what trains: TrainingParts.trained (a PolicyForward, wrapped), or a bare model
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
    ref_model: torch.nn.Module | None = None  # for the KL term (beta > 0); with LoRA, the policy; sharded with FSDP2
    share_prompts: bool = True  # pack a group's completions behind one prompt (batching.py)
    shape_multiple: int = 1     # pad rows and head positions to a multiple of this (onednn_cache.py)
    # Called before each micro-batch: the cores split with vLLM (inference/cpu_sharing.py).
    before_micro_batch: Callable[[], None] | None = None
    topology: Topology = SINGLE  # which share of each step this process trains


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
        return step_logprobs(ctx.ref_model, batch, ctx.temperature, with_entropy=False)[0]


def batch_advantages(groups: list[Group], num_generations: int, scale: str):
    totals = torch.tensor([t for g in groups for t in g.totals], dtype=torch.float32)
    return group_advantages(totals, num_generations, scale)


def train_step(ctx: StepContext, groups: list[Group], advantages) -> dict[str, float]:
    started = time.perf_counter()
    step_batches = micro_batches(rows_of(groups, advantages.values), ctx.micro_batch_size, ctx.pad_id,
                                 share_prompts=ctx.share_prompts, shape_multiple=ctx.shape_multiple)
    step_tokens = sum(b.completion_tokens for b in step_batches)
    batches = share_of(step_batches, ctx.topology)
    sums: dict[str, float] = {names.TRAIN_LOSS: 0.0, names.TRAIN_ENTROPY: 0.0, "tokens": 0.0}
    ctx.model.train()
    for index, batch in enumerate(batches):
        if ctx.before_micro_batch is not None:
            ctx.before_micro_batch()
        batch = batch.to(ctx.accelerator.device)
        with gradient_sync(ctx.model, reduce=index == len(batches) - 1), ctx.accelerator.autocast():
            logp, entropy = step_logprobs(ctx.model, batch, ctx.temperature)
            inputs = LossInputs(logp=logp, old_logp=logp.detach(), sampler_logp=batch.sampler_logp,
                                advantages=batch.advantages, mask=batch.mask, ref_logp=_ref_logp(ctx, batch))
            loss, diagnostics = grpo_loss(inputs, ctx.loss_settings, tokens_in_batch=_normalizer(ctx, step_tokens))
            if ctx.loss_settings.loss_type != "dapo":
                loss = loss / len(step_batches)  # the others average per micro-batch
            ctx.accelerator.backward(loss * ctx.topology.world_size)
        weight = batch.completion_tokens / max(step_tokens, 1)
        sums[names.TRAIN_LOSS] += loss.item()
        sums[names.TRAIN_ENTROPY] += entropy * weight
        sums["tokens"] += batch.tokens
        _accumulate(sums, diagnostics, weight)
    sums = summed_over_processes(sums)
    grad_norm = _clip(ctx)
    ctx.optimizer.step()
    ctx.scheduler.step()
    ctx.optimizer.zero_grad(set_to_none=True)
    seconds = time.perf_counter() - started
    tokens = sums.pop("tokens")
    return {
        **sums, names.TRAIN_GRAD_NORM: grad_norm, names.TRAIN_LEARNING_RATE: ctx.scheduler.get_last_lr()[0],
        names.TRAIN_ADVANTAGE_STD: advantages.values.std().item(),
        names.ROLLOUT_FRAC_REWARD_ZERO_STD: advantages.frac_zero_std,
        names.SYSTEM_TRAIN_SECONDS: seconds, names.SYSTEM_TRAINING_TOKENS_PER_S: tokens / seconds,
    }


def share_of(batches: list, topology: Topology) -> list:
    """This process's micro-batches: every N-th from its rank (the step's are sorted by group and
    length, so the shares stay alike). Every process must get as many: each reduces once."""
    if len(batches) % topology.world_size:
        raise ValueError(f"{len(batches)} micro-batches do not split evenly over {topology.world_size} trainer "
                         f"processes: gradient_accumulation_steps must be a multiple of the process count")
    return batches[topology.rank::topology.world_size]


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
    """The gradient's norm over all of the model (a sharded one's too), clipped where configured."""
    parameters = [p for p in ctx.model.parameters() if p.grad is not None]
    if ctx.max_grad_norm and ctx.max_grad_norm > 0:
        norm = ctx.accelerator.clip_grad_norm_(parameters, ctx.max_grad_norm)
    else:
        gradients = [p.grad for p in parameters if p.grad is not None]  # the filter above, said again to mypy
        norm = torch.nn.utils.get_total_norm(gradients) if gradients else torch.tensor(0.0)
    return float(full_tensor(norm))
