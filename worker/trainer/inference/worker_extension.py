"""Methods vLLM's worker processes gain (`vllm serve --worker-extension-cls`, see launch.py).

This module is imported inside vLLM's workers: it imports nothing of the trainer.
"""
EXTENSION_CLASS = "worker.trainer.inference.worker_extension.WeightReloadExtension"


class WeightReloadExtension:
    def reload_weights_keeping_ties(self, weights_path: str) -> bool:
        """vLLM's `reload_weights` from `weights_path`, then the output head tied to the
        embeddings again where the model ties them. Returns whether it re-tied a head.

        vLLM (0.32) reloads layer by layer. A tied head has no weights of its own in a
        checkpoint, so the reload puts it back as it was: on a CPU with its GEMM weights
        prepacked from the old values. The server then samples from the new body through
        the old head: on SmolLM2-135M, after one sync, its log-probs were up to 2.6 nats
        from the trainer's, and equal (2e-5) to those of the new body with the old head.
        """
        self.reload_weights(weights_path=weights_path)  # the worker's own method
        return retie_output_head(self.model_runner.get_model())


def retie_output_head(model) -> bool:
    """Shares the embedding weights with the output head again and rebuilds what the head
    derives from them (the prepacked CPU GEMM; nothing on GPUs)."""
    if not getattr(getattr(model, "config", None), "tie_word_embeddings", False):
        return False
    from vllm.model_executor.layers.vocab_parallel_embedding import ParallelLMHead, VocabParallelEmbedding

    heads = [m for m in model.modules() if isinstance(m, ParallelLMHead)]
    embeddings = [m for m in model.modules()
                  if isinstance(m, VocabParallelEmbedding) and not isinstance(m, ParallelLMHead)]
    if len(heads) != 1 or len(embeddings) != 1:
        return False  # not the one-embedding, one-head layout this repair knows
    head = heads[0]
    head.quant_method.tie_weights(head, embeddings[0])
    head.quant_method.process_weights_after_loading(head)
    return True
