"""The rule that an engine step never reloads a LoRA adapter the worker already holds."""
import pytest

pytest.importorskip("msgspec")
vllm_lora = pytest.importorskip("vllm.lora.request")

from worker.trainer.inference.lora_serving import reload_adapters_only_when_asked  # noqa: E402


class RecordingLoraManager:
    """The two methods of vLLM's WorkerLoRAManager the rule reads and wraps."""

    def __init__(self, held=()):
        self.held = set(held)
        self.applied = []

    def list_adapters(self):
        return set(self.held)

    def _apply_adapters(self, requests):
        self.applied.append(requests)


def request(lora_int_id: int, path: str, load_inplace: bool):
    return vllm_lora.LoRARequest(lora_name=f"adapter-{lora_int_id}", lora_int_id=lora_int_id, lora_path=path,
                                 load_inplace=load_inplace)


def test_a_step_serving_a_held_adapter_does_not_reload_it():
    manager = RecordingLoraManager(held={1})
    assert reload_adapters_only_when_asked(manager) is True
    manager._apply_adapters({request(1, "/adapters/v2", load_inplace=True)})
    (applied,) = manager.applied[0]
    assert applied.load_inplace is False and applied.lora_path == "/adapters/v2"


def test_an_adapter_the_worker_does_not_hold_is_loaded_as_asked():
    manager = RecordingLoraManager(held={1})
    reload_adapters_only_when_asked(manager)
    manager._apply_adapters({request(2, "/adapters/other", load_inplace=True), None})
    loaded = [r for r in manager.applied[0] if r is not None]
    assert [r.load_inplace for r in loaded] == [True] and None in manager.applied[0]


def test_the_rule_is_installed_once():
    manager = RecordingLoraManager(held={1})
    reload_adapters_only_when_asked(manager)
    assert reload_adapters_only_when_asked(manager) is False
    manager._apply_adapters({request(1, "/adapters/v3", load_inplace=True)})
    assert len(manager.applied) == 1  # one wrapper, not two
