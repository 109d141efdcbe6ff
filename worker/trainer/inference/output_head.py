"""Keeping vLLM's output head in step with reloaded weights on a CPU.

On a CPU vLLM serves the head through a GEMM packed from its weights at load time, so new
weights reach the head only when it is packed again. Imported inside vLLM's workers.
"""


def one_embedding_and_head(model) -> tuple | None:
    """(input embedding, output head) when `model` has exactly one of each, else None."""
    from vllm.model_executor.layers.vocab_parallel_embedding import ParallelLMHead, VocabParallelEmbedding

    heads = [m for m in model.modules() if isinstance(m, ParallelLMHead)]
    embeddings = [m for m in model.modules()
                  if isinstance(m, VocabParallelEmbedding) and not isinstance(m, ParallelLMHead)]
    if len(heads) != 1 or len(embeddings) != 1:
        return None
    return embeddings[0], heads[0]


def retie_output_head(model) -> bool:
    """Shares the embedding weights with the output head again where the model ties them, and
    repacks the head's GEMM from them. Returns whether it re-tied a head.

    vLLM (0.32) reloads layer by layer. A tied head has no weights of its own in a checkpoint,
    so vLLM's reload puts it back as it was: on a CPU with its GEMM packed from the old values.
    The server then samples from the new body through the old head: on SmolLM2-135M, after one
    sync, its log-probs were up to 2.6 nats from the trainer's, and equal (2e-5) to those of
    the new body with the old head.
    """
    if not getattr(getattr(model, "config", None), "tie_word_embeddings", False):
        return False
    pair = one_embedding_and_head(model)
    if pair is None:
        return False  # not the one-embedding, one-head layout this repair knows
    embedding, head = pair
    head.quant_method.tie_weights(head, embedding)
    head.quant_method.process_weights_after_loading(head)
    return True


def repack_output_head(model) -> None:
    """After weights were loaded in place: the head's GEMM packed again from its (tied or own)
    weights. The input embedding is left alone: a lookup uses its weights, not a GEMM."""
    if retie_output_head(model):
        return
    pair = one_embedding_and_head(model)
    if pair is not None:
        head = pair[1]
        head.quant_method.process_weights_after_loading(head)
