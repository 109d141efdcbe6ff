"""vLLM serves tiny models of the families whose logits the trainer post-processes, and its
sampling log-probs equal the trainer's. One server per family (about 30 s each); the rest of
the families are measured by bench/family_logprobs.py (all within 2e-6 but Cohere-2)."""
import pytest

# Soft-capping and sliding windows, a divisor, a scale, and a plain head.
FAMILIES = ("gemma2", "granite", "cohere", "qwen2")
# Both sides compute in float32 here: the gap measured is about 1e-6 (bench/README.md).
TOLERANCE = 1e-4


@pytest.mark.slow
@pytest.mark.parametrize("model_type", FAMILIES)
def test_the_served_sampling_logprobs_equal_the_trainers(model_type, trainer_stack, tmp_path):
    from worker.trainer.inference.server import VLLMServer
    from bench.served_agreement import agreement_config, measure
    from worker.trainer.models.tiny import build_tiny_model

    model_dir = build_tiny_model(tmp_path / model_type, model_type=model_type)
    with VLLMServer.for_config(str(model_dir), agreement_config(), log_path=tmp_path / "vllm.log",
                               dtype="float32") as server:
        server.wait_until_healthy()
        gap = measure(model_dir, server.url, server.served_model_name)
    assert gap.tokens >= 16
    assert gap.max_abs_diff < TOLERANCE, gap
