"""LoRA on the policy: the base model frozen, a PEFT adapter trained on its linear layers.

The reference model for the KL term is the same model with the adapter switched off (no
second copy in memory). vLLM is given the merged weights, base plus adapter, under the base
model's own parameter names, computed without touching the trained model.
"""
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, TypeGuard, cast

import torch

if TYPE_CHECKING:  # both load slowly, and only a LoRA run needs peft
    from peft import PeftModel
    from transformers import PreTrainedModel

# The projections a family's adapter goes on when the config names none: attention and MLP.
DEFAULT_TARGETS: tuple[str, ...] = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
FAMILY_TARGETS: dict[str, tuple[str, ...]] = {"phi3": ("qkv_proj", "o_proj", "gate_up_proj", "down_proj")}
PEFT_PREFIX = "base_model.model."


class LoraSettingsError(ValueError):
    """LoRA settings that do not fit the model: `field` is the config knob to change."""

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field


def target_modules_for(model_type: str | None, chosen: list[str]) -> list[str]:
    return list(chosen) or list(FAMILY_TARGETS.get(model_type or "", DEFAULT_TARGETS))


def linear_shapes(model: "PreTrainedModel") -> dict[str, set[tuple[int, int]]]:
    """(in, out) features of the linear layers by their last name (`q_proj`), the head excluded."""
    head = model.get_output_embeddings()
    shapes: dict[str, set[tuple[int, int]]] = {}
    for name, module in model.named_modules():
        if isinstance(module, torch.nn.Linear) and module is not head:
            shapes.setdefault(name.rsplit(".", 1)[-1], set()).add((module.in_features, module.out_features))
    return shapes


def settings_problem(model: "PreTrainedModel", targets: list[str], rank: int) -> LoraSettingsError | None:
    """Targets the model lacks, or a rank larger than a targeted layer is wide."""
    shapes = linear_shapes(model)
    if missing := [name for name in targets if name not in shapes]:
        return LoraSettingsError("lora_target_modules", (
            f"no linear layer named {', '.join(missing)} in this model; its linear layers are: "
            f"{', '.join(sorted(shapes))}"))
    narrowest = min(min(shape) for name in targets for shape in shapes[name])
    if rank > narrowest:
        return LoraSettingsError("lora_r", (
            f"lora_r ({rank}) is larger than the narrowest targeted layer ({narrowest} features): "
            f"at most {narrowest} here"))
    return None


def local_settings_problem(model_path: str, targets: list[str], rank: int) -> LoraSettingsError | None:
    """settings_problem for a model on this machine, built on the meta device (no weights read);
    None where the model or the trainer stack is not here: the worker checks then."""
    try:
        from transformers import AutoConfig, AutoModelForCausalLM
    except ImportError:
        return None
    config = AutoConfig.from_pretrained(model_path)
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(config)
    return settings_problem(model, target_modules_for(config.model_type, targets), rank)


def attach_adapter(model: "PreTrainedModel", config) -> "PeftModel":
    """`model` frozen under a fresh trainable adapter, per the config's lora_* knobs."""
    from peft import LoraConfig, get_peft_model

    targets = target_modules_for(model.config.model_type, config.lora_targets)
    if problem := settings_problem(model, targets, config.lora_r):
        raise problem
    adapter = LoraConfig(r=config.lora_r, lora_alpha=config.lora_alpha, lora_dropout=config.lora_dropout,
                         target_modules=targets, task_type="CAUSAL_LM")
    return get_peft_model(model, adapter)


def load_adapter(model: "PreTrainedModel", checkpoint: str) -> "PeftModel":
    """`model` under the trainable adapter a checkpoint saved (resuming a LoRA run)."""
    from peft import PeftModel

    return PeftModel.from_pretrained(model, checkpoint, is_trainable=True)


def has_adapter(model: torch.nn.Module) -> TypeGuard["PeftModel"]:
    """By what it offers rather than its class: peft is imported only where a run uses LoRA."""
    return hasattr(model, "disable_adapter") and hasattr(model, "peft_config")


def reference_forward(model: torch.nn.Module):
    """A context in which `model` computes as the reference: the adapter off, when it has one."""
    return model.disable_adapter() if has_adapter(model) else nullcontext()


def merged_state_dict(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    """The base model's state dict with each adapted layer's weight + its adapter's delta, under
    the base model's own names (what vLLM loads); the trained model is left as it is."""
    from peft.tuners.lora import LoraLayer

    deltas: dict[str, torch.Tensor] = {}
    for name, module in model.named_modules():
        if isinstance(module, LoraLayer):
            active = [adapter for adapter in module.active_adapters if adapter in module.lora_A]
            # LoraLayer declares no get_delta_weight; each concrete LoRA layer (Linear, Embedding, Conv) has one.
            weights = [module.get_delta_weight(adapter) for adapter in active]  # type: ignore[attr-defined]
            if weights:
                deltas[f"{name}.base_layer.weight"] = sum(weights[1:], weights[0])
    merged = {}
    with torch.no_grad():
        for name, tensor in model.state_dict().items():
            if ".lora_" in name:
                continue
            if name in deltas:
                tensor = tensor + deltas[name].to(tensor.dtype)
            merged[name.removeprefix(PEFT_PREFIX).replace(".base_layer.", ".")] = tensor
    return merged


class ServedLora:
    """A LoRA policy as the weight sync sees it: the adapter alone (sent to a server that loads
    adapters), or where a whole model's state dict is read, the merged weights."""

    def __init__(self, peft_model: "PeftModel"):
        self.peft_model = peft_model
        self._adapter_parameters: dict[str, torch.Tensor] | None = None

    def state_dict(self) -> dict[str, torch.Tensor]:
        return merged_state_dict(self.peft_model)

    def adapter_tensors(self) -> dict[str, torch.Tensor]:
        """The adapter's tensors under the names PEFT saves them with. PEFT finds them by walking
        the whole model's state dict, which costs more than writing them: done once, and the
        parameters found are read again at each call."""
        if self._adapter_parameters is None:
            from peft import get_peft_model_state_dict

            parameters = {tensor.data_ptr(): tensor for tensor in self.peft_model.parameters()}
            saved = get_peft_model_state_dict(self.peft_model)
            if any(tensor.data_ptr() not in parameters for tensor in saved.values()):
                return saved  # a tensor that is no parameter: read it afresh every time
            self._adapter_parameters = {name: parameters[tensor.data_ptr()] for name, tensor in saved.items()}
        return dict(self._adapter_parameters)

    def save_adapter(self, folder, dtype: torch.dtype | None = None) -> None:
        """The adapter's weights (cast to `dtype` if given) and config as vLLM loads them, and
        nothing else (PEFT's own save_pretrained also writes a model card)."""
        from safetensors.torch import save_file

        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        tensors = {name: tensor.detach().to(dtype or tensor.dtype).contiguous()
                   for name, tensor in self.adapter_tensors().items()}
        save_file(tensors, str(folder / "adapter_model.safetensors"), metadata={"format": "pt"})
        self.peft_model.peft_config["default"].save_pretrained(folder)


def save_merged_model(peft_model: "PeftModel", folder, tokenizer=None) -> Path:
    """A ready-to-serve model in `folder`: the base's config, the merged weights under its own
    names, the tokenizer; what a LoRA run exports beside its adapter."""
    folder = Path(folder)
    base = cast("PreTrainedModel", peft_model.get_base_model())  # peft says Module: ours are transformers models
    base.save_pretrained(folder, state_dict=merged_state_dict(peft_model), safe_serialization=True)
    if tokenizer is not None:
        tokenizer.save_pretrained(folder)
    return folder


def served_weights(model: torch.nn.Module):
    """What the weight sync is given for `model`: a ServedLora for a LoRA model, else the model."""
    return ServedLora(model) if has_adapter(model) else model
