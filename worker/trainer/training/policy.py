"""Log-probabilities of completion tokens under the policy, computed only where they are needed.

The vocabulary projection is the most expensive layer of a small model (for
SmolLM2-135M, 28M of its 135M parameters). Running the decoder on every
position but the projection only on positions that predict a completion token
skips it for the whole prompt and the padding. Batches may pack several completions
behind one prompt (worker/trainer/training/batching.py). What a family's forward does to the logits
after the head (soft-capping, scaling) is applied here too (models/families.py).
"""
import torch

from worker.trainer.training.batching import MicroBatch, within_window
from worker.trainer.models.families import LogitTransform, logit_transform_of


def completion_logprobs(model, batch: MicroBatch, temperature: float, with_entropy: bool = False):
    """[S, T] log-probs of each completion's tokens (0 past its end), and the mean entropy if asked."""
    decoder, head = model.get_decoder(), model.get_output_embeddings()
    hidden = decoder(input_ids=batch.input_ids, attention_mask=attention_mask_for(model.config, batch),
                     position_ids=batch.position_ids).last_hidden_state
    where = batch.mask.bool()
    # The positions that predict completion tokens (a packed prompt's last one several times).
    predicting = batch.sources[where]
    count = predicting.numel()
    predicting = padded_to_multiple(predicting, batch.shape_multiple)
    transform = logit_transform_of(model.config)
    logits = _tempered_logits(head, hidden.reshape(-1, hidden.shape[-1])[predicting], temperature,
                              transform)[:count]  # [N, V]
    # One log-softmax serves the log-probs, their gradient and the entropy.
    logp_all = torch.log_softmax(logits, dim=-1)
    token_logp = logp_all.gather(1, batch.targets[where].unsqueeze(1)).squeeze(1)
    full = torch.zeros(batch.mask.shape, dtype=token_logp.dtype, device=token_logp.device)
    full = full.masked_scatter(where, token_logp)
    entropy = None
    if with_entropy:
        with torch.no_grad():
            entropy = -(logp_all.exp() * logp_all).sum(-1).mean().item()
    return full, entropy


class PolicyForward(torch.nn.Module):
    """completion_logprobs as the forward of one module. DDP reduces gradients and FSDP2 gathers
    the outer parameters (embeddings, final norm, head) in hooks around a wrapped module's
    forward; the policy's own forward computes every position's logits, so the trainer wraps
    this instead and the hooks run around the forward it really does."""

    def __init__(self, policy: torch.nn.Module):
        super().__init__()
        self.policy = policy

    def forward(self, batch: MicroBatch, temperature: float, with_entropy: bool = False):
        return completion_logprobs(self.policy, batch, temperature, with_entropy)


def step_logprobs(trained: torch.nn.Module, batch: MicroBatch, temperature: float, with_entropy: bool = True):
    """Log-probs (and entropy) through a (wrapped) PolicyForward, or a bare model: what a step
    trains, or the reference."""
    wrapped = getattr(trained, "module", trained)  # DDP keeps its module here
    if isinstance(wrapped, PolicyForward):
        return trained(batch, temperature, with_entropy=with_entropy)
    return completion_logprobs(trained, batch, temperature, with_entropy=with_entropy)


def attention_mask_for(config, batch: MicroBatch):
    """The batch's mask as the model takes it. A packed batch brings its own [B, 1, L, L] mask,
    which transformers then uses as it is, so sliding-window attention (Mistral, Gemma-2/3,
    Cohere-2) must be put into it here: one mask for all layers, or one per layer type."""
    window = getattr(config, "sliding_window", None)
    if batch.attention_mask.dim() != 4 or not window:
        return batch.attention_mask
    windowed = within_window(batch.attention_mask, batch.position_ids, window)
    layer_types = set(getattr(config, "layer_types", None) or [])
    if not layer_types:
        return windowed  # every layer slides
    return {"full_attention": batch.attention_mask, "sliding_attention": windowed}


def padded_to_multiple(positions: torch.Tensor, multiple: int) -> torch.Tensor:
    """`positions` with its first one repeated up to a multiple of `multiple`: the head then
    sees a few row counts instead of one per micro-batch; the extra rows are sliced off
    before anything uses them, so they get no gradient."""
    extra = -positions.numel() % multiple
    if extra == 0 or positions.numel() == 0:
        return positions
    return torch.cat([positions, positions[:1].expand(extra)])


PLAIN_HEAD = LogitTransform()


def _tempered_logits(head, hidden, temperature: float, transform: LogitTransform = PLAIN_HEAD):
    """transform(head(hidden)) / temperature in float32. Without a bias and with a linear
    transform, the hidden states are divided instead: a few hundred values a position
    instead of the vocabulary's."""
    if getattr(head, "bias", None) is None and transform.is_linear:
        return transform(head(hidden / temperature)).float()
    return transform(head(hidden).float()) / temperature
