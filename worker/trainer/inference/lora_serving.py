"""A LoRA adapter that vLLM has loaded stays in memory until it is explicitly loaded again.

vLLM (0.32) gives every generation request the LoRARequest of its adapter's latest load. After
a load with `load_inplace`, which each weight sync makes, those requests say `load_inplace` too,
and the worker reloads the adapter from its files at every engine step that serves it: a disk
read a step, a step that serves an older request reloads the older version, and the server
fails once the files are gone. Here a step never reloads an adapter the worker holds;
`/v1/load_lora_adapter` still does.

Imported inside vLLM's workers (inference/worker_extension.py): no vLLM import at module level.
"""


def reload_adapters_only_when_asked(lora_manager) -> bool:
    """Installs the rule on a worker's LoRA manager (vLLM's WorkerLoRAManager); False where it
    was installed already."""
    if getattr(lora_manager, "reloads_only_when_asked", False):
        return False
    from msgspec.structs import replace

    apply_adapters = lora_manager._apply_adapters  # what set_active_adapters calls at every step

    def apply_without_reloading(requests) -> None:
        held = lora_manager.list_adapters()
        apply_adapters({replace(request, load_inplace=False)
                        if request and request.load_inplace and request.lora_int_id in held else request
                        for request in requests})

    lora_manager._apply_adapters = apply_without_reloading
    lora_manager.reloads_only_when_asked = True
    return True
