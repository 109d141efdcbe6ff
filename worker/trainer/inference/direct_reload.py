"""A faster in-place weight reload for vLLM on a CPU: the checkpoint goes straight into the
layers and each linear layer is repacked once.

vLLM's own reload (0.32) runs each layer's weight loader twice (once on meta tensors), builds
the layer again, repacks and copies back, and packs the input embeddings as if they were an
output head. `python -m bench.weight_sync` times both and checks that the served log-probs
agree; figures in bench/README.md.

It relies on vLLM internals (the restore metadata vLLM records at load time for its own
reload), so it is used only where `direct_reload_refusal` finds nothing against it; otherwise
the caller uses vLLM's reload. Imported inside vLLM's workers: vLLM is imported inside the
functions, so the trainer can import this module without it.
"""
from collections.abc import Iterator
from pathlib import Path

from worker.trainer.inference.output_head import one_embedding_and_head, repack_output_head


def unquantized_linears(model) -> list:
    from vllm.model_executor.layers.linear import LinearBase, UnquantizedLinearMethod

    return [module for module in model.modules()
            if isinstance(module, LinearBase) and isinstance(module.quant_method, UnquantizedLinearMethod)]


def direct_reload_refusal(model, uses_lora: bool) -> str | None:
    """Why the direct reload does not apply to `model`, or None when it does."""
    from vllm.model_executor.layers.linear import UnquantizedLinearMethod
    from vllm.model_executor.layers.vocab_parallel_embedding import UnquantizedEmbeddingMethod
    from vllm.model_executor.model_loader.reload.layerwise import get_layerwise_info
    from vllm.platforms import current_platform

    if not current_platform.is_cpu():
        return "not a CPU server: vLLM's reload has no weights to repack there"
    if uses_lora:
        return "the server has LoRA adapters"
    for module in model.modules():
        method = getattr(module, "quant_method", None)
        if method is not None and not isinstance(method, (UnquantizedLinearMethod, UnquantizedEmbeddingMethod)):
            return f"{type(module).__name__} is quantized or special ({type(method).__name__})"
    if one_embedding_and_head(model) is None:
        return "not one input embedding and one output head"
    for layer in unquantized_linears(model):
        if "weight" not in get_layerwise_info(layer).restore_metadata[0]:
            return f"no load-time record of {type(layer).__name__}'s weight"
    return None


def checkpoint_shaped_weight(layer):
    """A new, unfilled weight for `layer` as it was before the CPU GEMM packed it away:
    the same shape, parameter class and weight loader (from vLLM's load-time record)."""
    from vllm.model_executor.model_loader.reload.layerwise import _get_original_loader, get_layerwise_info
    from vllm.model_executor.model_loader.reload.meta import materialize_meta_tensor
    from vllm.model_executor.model_loader.reload.sanitize import restore_layer_refs

    record = get_layerwise_info(layer).restore_metadata[0]["weight"]
    weight = materialize_meta_tensor(restore_layer_refs(record, layer))
    # vLLM's own reload wraps the recorded loader in place and leaves the wrapper there. The
    # loader is an attribute vLLM hangs on its weights, unknown to torch's Tensor: set by name.
    setattr(weight, "weight_loader", _get_original_loader(weight))  # noqa: B010
    return weight


def safetensors_in(folder: str) -> Iterator[tuple[str, object]]:
    from safetensors import safe_open

    files = sorted(Path(folder).glob("*.safetensors"))
    if not files:
        raise FileNotFoundError(f"no .safetensors file in {folder}")
    for path in files:
        with safe_open(str(path), framework="pt") as tensors:
            for name in tensors.keys():
                yield name, tensors.get_tensor(name)


def reload_directly(model, weights_path: str) -> None:
    """Loads the checkpoint in `weights_path` into `model` in place and repacks what the CPU
    GEMM derives from it. Call only where `direct_reload_refusal` returned None."""
    linears = unquantized_linears(model)
    # After loading, a linear layer's weight is an empty placeholder: the values live in its packed GEMM.
    placeholders = {layer: layer.weight for layer in linears}
    for layer in linears:
        del layer.weight
        layer.register_parameter("weight", checkpoint_shaped_weight(layer))
    try:
        loaded = model.load_weights(safetensors_in(weights_path))
        missing = sorted({name for name, _ in model.named_parameters()} - set(loaded or ()))
        if missing:  # unfilled weights would be served as whatever the memory held
            raise ValueError(f"{weights_path} has no weights for {len(missing)} parameters, e.g. {missing[:3]}")
    except BaseException:
        for layer, placeholder in placeholders.items():  # their old packed GEMMs still serve
            del layer.weight
            layer.register_parameter("weight", placeholder)
        raise
    for layer in linears:
        layer.quant_method.process_weights_after_loading(layer)  # packs it and drops the weight again
    repack_output_head(model)
