"""Methods vLLM's worker processes gain (`vllm serve --worker-extension-cls`, see launch.py).

This module is imported inside vLLM's workers: it imports nothing of the trainer outside
this package.
"""
import time
from typing import TYPE_CHECKING

from worker.trainer.inference.direct_reload import direct_reload_refusal, reload_directly
from worker.trainer.inference.lora_serving import reload_adapters_only_when_asked
from worker.trainer.inference.output_head import retie_output_head

EXTENSION_CLASS = "worker.trainer.inference.worker_extension.WeightReloadExtension"

# vLLM adds this class to its worker's bases: what it calls on `self` is the worker's (the CPU
# worker is a subclass of this one).
if TYPE_CHECKING:
    from vllm.v1.worker.gpu_worker import Worker as _Worker
else:
    _Worker = object


class WeightReloadExtension(_Worker):
    def reload_weights_in_place(self, weights_path: str, allow_direct: bool = True) -> dict:
        """The weights in `weights_path` served from now on, tied output head included.

        On a CPU, by the direct reload where it applies (direct_reload.py, the faster one);
        otherwise vLLM's `reload_weights`, then the output head tied again
        (output_head.retie_output_head: vLLM's own reload leaves a tied head stale).
        Returns which way it took, why not the direct one, and the seconds it took.
        """
        model = self.model_runner.get_model()
        refusal = (direct_reload_refusal(model, uses_lora=self.vllm_config.lora_config is not None)
                   if allow_direct else "the caller asked for vLLM's reload")
        started = time.perf_counter()
        if refusal is None:
            reload_directly(model, weights_path)
        else:
            self.reload_weights(weights_path=weights_path)  # the worker's own method
            retie_output_head(model)
        return {"reload": "direct" if refusal is None else "vllm", "why_not_direct": refusal,
                "seconds": round(time.perf_counter() - started, 4)}

    def keep_lora_adapters_loaded(self) -> dict:
        """From now on an adapter is read from its files only when it is loaded, not at every
        engine step (inference/lora_serving.py). Says whether the rule holds and why not."""
        manager = getattr(self.model_runner, "lora_manager", None)
        if manager is None:
            return {"kept": False, "why_not": "the server serves no LoRA adapters (started without --enable-lora)"}
        reload_adapters_only_when_asked(manager)
        return {"kept": True, "why_not": None}
