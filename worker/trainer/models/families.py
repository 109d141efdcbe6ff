"""The model families the trainer trains, and what each does to its logits after the output head.

The trainer computes log-probs from the decoder and the head directly, only at the positions
that predict completion tokens (worker/trainer/training/policy.py), so it must also apply what the
family's own forward applies after the head: Gemma-2/3 soft-cap the logits, Cohere multiplies
them by a scale, Granite divides them. A family not listed here is refused, never trained with
log-probs that silently differ from the model's (tests/worker/trainer/models/test_families.py
checks each against the model's own forward).
"""
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from worker.trainer.models.paths import ModelNotFoundError, ModelRefused, is_model_dir, resolve_model_path

# How each family post-processes its head's output, and which config field says by how much.
FAMILY_LOGITS: dict[str, tuple[Literal["none", "softcap", "scale", "divide"], str | None]] = {
    "llama": ("none", None),
    "mistral": ("none", None),
    "qwen2": ("none", None),
    "qwen3": ("none", None),
    "phi3": ("none", None),
    "smollm3": ("none", None),
    "olmo2": ("none", None),
    "gemma": ("none", None),
    "gemma2": ("softcap", "final_logit_softcapping"),
    "gemma3_text": ("softcap", "final_logit_softcapping"),
    "granite": ("divide", "logits_scaling"),
    "cohere": ("scale", "logit_scale"),
    "cohere2": ("scale", "logit_scale"),
}


class UnsupportedFamily(ValueError):
    """A model whose logits the trainer cannot reproduce."""


@dataclass(frozen=True)
class LogitTransform:
    """What a family's forward does to the head's output: soft-capping, a scale, or nothing."""
    kind: Literal["none", "softcap", "scale", "divide"] = "none"
    value: float | None = None

    @property
    def is_linear(self) -> bool:
        """True when it commutes with dividing the hidden states (the temperature shortcut)."""
        return self.kind != "softcap" or self.value is None

    def __call__(self, logits):
        import torch

        if self.value is None or self.kind == "none":
            return logits
        if self.kind == "softcap":
            return torch.tanh(logits / self.value) * self.value
        if self.kind == "scale":
            return logits * self.value
        return logits / self.value


def supported_families() -> list[str]:
    return sorted(FAMILY_LOGITS)


def family_problem(model_type: str | None) -> str | None:
    """Why a model of this `model_type` (config.json's) cannot be trained, or None."""
    if model_type in FAMILY_LOGITS:
        return None
    return (f"model family {model_type!r} is not supported: the trainer cannot check that its log-probabilities "
            f"match the model's own; supported families: {', '.join(supported_families())}")


def local_model_problem(model: str) -> str | None:
    """Why the model a config names cannot be trained, judged from its config.json where it is
    on this machine. A hub id not downloaded here passes: the worker checks it when loading."""
    try:
        local = Path(resolve_model_path(model))
    except (ModelNotFoundError, ModelRefused):
        return None  # where the model is, is the worker's to find; a refused one is refused by name
    if not is_model_dir(local):
        return None
    try:
        model_type = json.loads((local / "config.json").read_text()).get("model_type")
    except (OSError, ValueError, AttributeError) as exc:
        return f"cannot read {local / 'config.json'}: {exc}"
    return family_problem(model_type)


def logit_transform_of(config) -> LogitTransform:
    """The transform for a transformers model config; UnsupportedFamily for an unknown family."""
    model_type = getattr(config, "model_type", None)
    family = FAMILY_LOGITS.get(model_type) if isinstance(model_type, str) else None
    if family is None:
        raise UnsupportedFamily(family_problem(model_type))
    kind, field = family
    value = getattr(config, field, None) if field else None
    return LogitTransform(kind=kind, value=None if value is None else float(value))
