"""Log-probabilities of completion tokens under the policy, computed only where they are needed.

The vocabulary projection is the most expensive layer of a small model (for
SmolLM2-135M, 28M of its 135M parameters). Running the decoder on every
position but the projection only on positions that predict a completion token
skips it for the whole prompt and the padding. Batches may pack several completions
behind one prompt (worker/trainer/batching.py).
"""
import torch

from worker.trainer.batching import MicroBatch


def completion_logprobs(model, batch: MicroBatch, temperature: float, with_entropy: bool = False):
    """[S, T] log-probs of each completion's tokens (0 past its end), and the mean entropy if asked."""
    decoder, head = model.get_decoder(), model.get_output_embeddings()
    hidden = decoder(input_ids=batch.input_ids, attention_mask=batch.attention_mask,
                     position_ids=batch.position_ids).last_hidden_state
    where = batch.mask.bool()
    # The positions that predict completion tokens (a packed prompt's last one several times).
    predicting = batch.sources[where]
    count = predicting.numel()
    predicting = padded_to_multiple(predicting, batch.shape_multiple)
    logits = _tempered_logits(head, hidden.reshape(-1, hidden.shape[-1])[predicting], temperature)[:count]  # [N, V]
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


def padded_to_multiple(positions: torch.Tensor, multiple: int) -> torch.Tensor:
    """`positions` with its first one repeated up to a multiple of `multiple`: the head then
    sees a few row counts instead of one per micro-batch; the extra rows are sliced off
    before anything uses them, so they get no gradient."""
    extra = -positions.numel() % multiple
    if extra == 0 or positions.numel() == 0:
        return positions
    return torch.cat([positions, positions[:1].expand(extra)])


def _tempered_logits(head, hidden, temperature: float):
    """head(hidden) / temperature in float32. Without a bias the head is linear, so the hidden
    states are divided instead: 576 values a position for SmolLM2 instead of 49,152 (on a
    whole step, no difference in time measurable on the 2-core machine)."""
    if getattr(head, "bias", None) is None:
        return head(hidden / temperature).float()
    return head(hidden).float() / temperature
