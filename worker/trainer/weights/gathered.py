"""A sharded model's weights written whole by the leader, one tensor gathered at a time.

Every process takes part in each gather (a collective), in the order of the model's unique
state dict; the leader alone keeps each whole tensor, long enough to write it. So no process
ever holds more of the model than its shard and one whole tensor.
"""
import torch

from worker.trainer.distributed.sharding import full_tensor
from worker.trainer.weights.state_dict import unique_state_dict
from worker.trainer.weights.streamed_safetensors import SafetensorsRewriter


def gather_in_turn(model) -> None:
    """A follower's part in the leader's gathers (weight push, checkpoint): the same tensors in
    the same order, each dropped as soon as it is whole."""
    for tensor in unique_state_dict(model).values():
        full_tensor(tensor)


def write_whole_model(model, folder, leads: bool) -> None:
    """`model.safetensors` in `folder` as save_pretrained writes it (fp32, tied duplicates left
    out), from a sharded model; the followers only take part in the gathers."""
    if not leads:
        gather_in_turn(model)
        return
    writer = SafetensorsRewriter(folder / "model.safetensors", torch.float32, metadata={"format": "pt"})
    writer.write(unique_state_dict(model))
    model.config.save_pretrained(folder)
    if getattr(model, "generation_config", None) is not None:
        model.generation_config.save_pretrained(folder)
