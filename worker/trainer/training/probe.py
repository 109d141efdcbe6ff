"""One training step on a seeded batch, through the trainer's own code path, in however many
processes torchrun starts: what the step computed (loss, gradients, updated parameters) and what
it held and took (bytes of parameters, gradients and optimizer state; seconds; the share spent
in collectives).

    python -m worker.trainer.training.probe --model DIR --out result.pt [--distributed ddp]
    python -m torch.distributed.run --standalone --nproc-per-node 2 -m worker.trainer.training.probe ...

The equivalence test compares its results across process counts; bench/distributed.py prints
them; run by hand on a new GPU machine, it shows that a (multi-GPU) step works there.
"""
import argparse
import random
import resource
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import torch

from worker.trainer.config import TrainingConfig
from worker.trainer.distributed.sharding import full_tensor, local_part
from worker.trainer.distributed.topology import Topology
from worker.trainer.rollout.groups import Completion, Group
from worker.trainer.metric_names import TRAIN_ENTROPY, TRAIN_GRAD_NORM, TRAIN_LOSS

if TYPE_CHECKING:
    from transformers import PreTrainedModel


def seeded_groups(seed: int, groups: int, per_group: int, vocab: int, prompt_tokens: int = 12,
                  completion_tokens: int = 9) -> list[Group]:
    """Groups of random prompts and completions of varied lengths (half the most to the most),
    with rewards that differ."""
    rng = random.Random(seed)
    made = []
    for index in range(groups):
        prompt = [rng.randrange(3, vocab) for _ in range(rng.randint(prompt_tokens // 2, prompt_tokens))]
        completions = []
        for _ in range(per_group):
            ids = [rng.randrange(3, vocab) for _ in range(rng.randint(completion_tokens // 2, completion_tokens))]
            completions.append(Completion(token_ids=ids, logprobs=[-rng.uniform(0.5, 3.0) for _ in ids],
                                          text="", finish_reason="stop"))
        made.append(Group(prompt_index=index, prompt_text="", prompt_ids=prompt, columns={}, completions=completions,
                          model_version=0, totals=[rng.choice([0.0, 1.0, 0.5]) for _ in range(per_group)]))
    return made


def probe_config(model: str, distributed: str, processes: int, **overrides) -> TrainingConfig:
    settings: dict[str, Any] = dict(
        model=model, distributed=distributed, trainer_processes=processes, num_generations=4,
        per_device_train_batch_size=2, gradient_accumulation_steps=4, learning_rate=1e-3,
        max_grad_norm=0.0, bf16="off", share_prompts="auto", max_steps=10, seed=0)
    return TrainingConfig(**(settings | overrides))


def local_bytes(tensors) -> int:
    return sum(local_part(t).numel() * t.element_size() for t in tensors if t is not None)


class GradientCapture:
    """The gradients just before the optimizer steps (whole, on every process) and their local bytes."""

    def __init__(self, model, keep: bool):
        self.model, self.keep = model, keep
        self.grads: dict[str, torch.Tensor] = {}
        self.local_bytes = 0

    def __call__(self, optimizer, args, kwargs) -> None:
        named = [(n, p.grad) for n, p in self.model.named_parameters() if p.grad is not None]
        self.local_bytes = local_bytes(g for _, g in named)
        if self.keep:
            self.grads = {n: full_tensor(g).detach().cpu().clone() for n, g in named}


def communication_seconds(profile) -> float:
    """Seconds inside collectives, from the profiler's events (gloo's and NCCL's)."""
    names = ("gloo", "nccl", "c10d", "all_reduce", "allreduce", "reduce_scatter", "all_gather", "allgather",
             "broadcast")
    return sum(event.cpu_time_total for event in profile.key_averages()
               if any(name in event.key.lower() for name in names)) / 1e6


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m worker.trainer.training.probe", description=__doc__)
    parser.add_argument("--model", required=True)
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--distributed", default="auto", choices=("auto", "none", "ddp", "fsdp2"))
    parser.add_argument("--steps", type=int, default=1, help="steps timed after the first (which is compared)")
    parser.add_argument("--bf16", default="off", choices=("auto", "on", "off"))
    parser.add_argument("--keep-tensors", action="store_true", help="save gradients and parameters for comparing")
    parser.add_argument("--prompt-tokens", type=int, default=12, help="the longest prompt (the shortest: half)")
    parser.add_argument("--completion-tokens", type=int, default=9, help="the longest completion")
    parser.add_argument("--micro-batch", type=int, default=2, help="per_device_train_batch_size")
    parser.add_argument("--max-grad-norm", type=float, default=0.0, help="clip to this norm (0: no clipping)")
    parser.add_argument("--beta", type=float, default=0.0, help="KL coefficient (above 0: a reference model too)")
    parser.add_argument("--accumulation", type=int, default=4, help="gradient_accumulation_steps")
    args = parser.parse_args(argv)
    topology = Topology.from_env()
    result = run_probe(args, topology)
    if topology.leads:
        torch.save(result, args.out)


def run_probe(args, topology: Topology) -> dict:
    from worker.trainer.weights.gathered import gather_in_turn
    from worker.trainer.training.setup import build_training_parts
    from worker.trainer.training.step import batch_advantages, train_step
    from worker.trainer.weights.state_dict import unique_state_dict
    from worker.trainer.weights.streamed_safetensors import SafetensorsRewriter

    torch.manual_seed(0)
    config = probe_config(args.model, args.distributed, topology.world_size, bf16=args.bf16,
                          per_device_train_batch_size=args.micro_batch, gradient_accumulation_steps=args.accumulation,
                          max_grad_norm=args.max_grad_norm, beta=args.beta)
    parts = build_training_parts(args.model, config, topology=topology)
    model = cast("PreTrainedModel", parts.unwrapped_model())  # no LoRA here: the transformers model itself
    capture = GradientCapture(model, keep=args.keep_tensors)
    getattr(parts.optimizer, "optimizer", parts.optimizer).register_step_pre_hook(capture)
    ctx = parts.training_context(config)
    groups = seeded_groups(0, config.completions_per_step // config.num_generations, config.num_generations,
                           model.config.vocab_size, args.prompt_tokens, args.completion_tokens)
    advantages = batch_advantages(groups, config.num_generations, config.scale_rewards)
    metrics = train_step(ctx, groups, advantages)
    result = {"strategy": parts.sharing.strategy, "processes": topology.world_size,
              "device": str(parts.accelerator.device),
              "loss": metrics[TRAIN_LOSS], "grad_norm": metrics[TRAIN_GRAD_NORM],
              "entropy": metrics[TRAIN_ENTROPY],
              "parameter_bytes": local_bytes(model.parameters()), "gradient_bytes": capture.local_bytes,
              "optimizer_bytes": local_bytes(t for state in parts.optimizer.state.values()
                                             for t in state.values() if torch.is_tensor(t) and t.dim() > 0)}
    if args.keep_tensors:
        result["grads"] = capture.grads
        result["params"] = {name: full_tensor(p).detach().cpu().clone() for name, p in model.named_parameters()}
    step_seconds = []
    for _ in range(args.steps):
        started = time.perf_counter()
        train_step(ctx, groups, advantages)
        step_seconds.append(time.perf_counter() - started)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as profile:
        started = time.perf_counter()
        train_step(ctx, groups, advantages)
        profiled_s = time.perf_counter() - started
    result["step_s"] = sorted(step_seconds)[len(step_seconds) // 2] if step_seconds else profiled_s
    result["communication_share"] = min(1.0, communication_seconds(profile) / profiled_s)
    # The weight push's gather and write (what a filesystem sync writes before the server reloads).
    push_file = args.out.with_suffix(f".rank{topology.rank}.safetensors")
    started = time.perf_counter()
    if topology.leads:
        SafetensorsRewriter(push_file, torch.bfloat16).write(unique_state_dict(model))
        push_file.unlink()
    else:
        gather_in_turn(model)
    result["weight_push_s"] = time.perf_counter() - started
    result["peak_rss_gib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    result["tokens"] = sum(len(g.prompt_ids) + c for g in groups for c in (len(x.token_ids) for x in g.completions))
    if torch.cuda.is_available():
        result["peak_cuda_gib"] = torch.cuda.max_memory_allocated() / 2**30
    return result


if __name__ == "__main__":
    main()
