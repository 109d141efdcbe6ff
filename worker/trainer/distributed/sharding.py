"""Sharing one model among the trainer's processes: FSDP2 sharding, when gradients are reduced,
gathering a sharded tensor, and summing a step's figures over the processes."""
from contextlib import contextmanager, nullcontext

import torch


def shard_with_fsdp2(model: torch.nn.Module, device_mesh=None) -> torch.nn.Module:
    """Each decoder layer its own FSDP2 unit (gathered only while it computes), then the root
    (embeddings, final norm and head, tied or not). Layers are found by the classes transformers
    says never to split (`_no_split_modules` of the policy, or of the one a PolicyForward holds),
    so every family is sharded the same way."""
    from torch.distributed.fsdp import fully_shard

    policy = getattr(model, "policy", model)
    unit_classes = set(getattr(policy, "_no_split_modules", None) or [])
    for module in model.modules():
        if type(module).__name__ in unit_classes:
            fully_shard(module, mesh=device_mesh)
    fully_shard(model, mesh=device_mesh)
    return model


def is_sharded(model: torch.nn.Module) -> bool:
    """Whether `model` holds FSDP2 shards (DTensor parameters): the sharded PolicyForward, and the
    policy inside it too, which is not itself an FSDP unit (what checkpoints and pushes get)."""
    return any(hasattr(parameter, "full_tensor") for parameter in model.parameters())


def gradient_sync(model: torch.nn.Module, reduce: bool):
    """Gradients reduced over the processes only after a step's last micro-batch (`reduce`):
    the ones before accumulate locally. DDP's no_sync, FSDP2's requires_gradient_sync."""
    if hasattr(model, "set_requires_gradient_sync"):  # FSDP2's FSDPModule
        return _fsdp_gradient_sync(model, reduce)
    no_sync = getattr(model, "no_sync", None)  # DDP's; a module's own attribute, not a submodule
    if reduce or no_sync is None:
        return nullcontext()
    return no_sync()


@contextmanager
def _fsdp_gradient_sync(model, reduce: bool):
    model.set_requires_gradient_sync(reduce)
    try:
        yield
    finally:
        model.set_requires_gradient_sync(True)


def full_tensor(tensor: torch.Tensor) -> torch.Tensor:
    """A sharded (DTensor) parameter gathered whole, on every process (a collective: all call it,
    in the same order); any other tensor as it is."""
    gather = getattr(tensor, "full_tensor", None)
    return gather() if gather is not None else tensor


def local_part(tensor: torch.Tensor) -> torch.Tensor:
    to_local = getattr(tensor, "to_local", None)
    return to_local() if to_local is not None else tensor


def summed_over_processes(values: dict[str, float]) -> dict[str, float]:
    """A step's figures summed over the processes, except `_min` and `_max` ones, which take the
    smallest and largest: each process adds up its micro-batches, weighted by the step's total."""
    import torch.distributed as dist

    if not dist.is_initialized() or dist.get_world_size() == 1:
        return values
    names = sorted(values)
    by_op = {dist.ReduceOp.MIN: [n for n in names if n.endswith("_min")],
             dist.ReduceOp.MAX: [n for n in names if n.endswith("_max")]}
    by_op[dist.ReduceOp.SUM] = [n for n in names if n not in by_op[dist.ReduceOp.MIN] + by_op[dist.ReduceOp.MAX]]
    reduced: dict[str, float] = {}
    for op, chosen in by_op.items():
        if not chosen:
            continue
        tensor = torch.tensor([values[n] for n in chosen], dtype=torch.float64, device=_collective_device())
        dist.all_reduce(tensor, op=op)
        reduced.update(zip(chosen, tensor.tolist()))
    return reduced


def _collective_device() -> torch.device:
    """NCCL reduces CUDA tensors only; gloo CPU ones."""
    import torch.distributed as dist

    if dist.get_backend() == "nccl":
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device("cpu")
