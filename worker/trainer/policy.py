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
    predicting = hidden.reshape(-1, hidden.shape[-1])[batch.sources[where]]
    logits = head(predicting).float() / temperature                        # [N, V]
    targets = batch.targets[where]                                         # [N]
    token_logp = logits.gather(1, targets.unsqueeze(1)).squeeze(1) - torch.logsumexp(logits, dim=-1)
    full = torch.zeros(batch.mask.shape, dtype=token_logp.dtype, device=token_logp.device)
    full = full.masked_scatter(where, token_logp)
    entropy = None
    if with_entropy:
        with torch.no_grad():
            probs = torch.softmax(logits, dim=-1)
            entropy = (torch.logsumexp(logits, dim=-1) - (probs * logits).sum(-1)).mean().item()
    return full, entropy
