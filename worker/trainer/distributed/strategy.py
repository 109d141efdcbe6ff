"""Which way the trainer's processes share the model: the `distributed` knob's auto rule.

Full fine-tuning with AdamW in fp32 keeps 16 bytes a parameter (weights, gradients and two
moments) before activations; DDP holds all of it in every process, FSDP2 a 1/N share of it.
auto shards once that state would take more than half a device, so that DDP still leaves the
other half for activations; a LoRA adapter's state is tiny, so LoRA replicates.
"""
from dataclasses import dataclass

from worker.trainer.config.layout import impossible_setting

TRAINING_BYTES_A_PARAMETER = 16
REFERENCE_BYTES_A_PARAMETER = 4  # the frozen fp32 base the KL term compares with (beta > 0, no LoRA)
SHARE_OF_DEVICE_FOR_STATE = 0.5


class DistributedSettingError(ValueError):
    """A `distributed` setting this many processes cannot run; the message says why."""


@dataclass(frozen=True)
class Choice:
    strategy: str   # none, ddp or fsdp2
    reason: str     # for the run's log

    def describe(self, processes: int) -> str:
        return f"trainer in {processes} process(es), distributed={self.strategy}: {self.reason}"


def choose_strategy(setting: str, processes: int, *, parameters: int, lora: bool,
                    device_bytes: int | None, reference: bool = False) -> Choice:
    """`setting` (auto, none, ddp, fsdp2) for `processes` trainer processes; `parameters`: the
    policy's, `device_bytes`: one device's memory (None: unknown, a CPU); `reference`: a separate
    reference model is held too."""
    if setting != "auto":
        _refuse_impossible(setting, processes, lora)
        return Choice(setting, "as configured")
    if processes == 1:
        return Choice("none", "one process")
    if lora:
        return Choice("ddp", "a LoRA adapter's training state is small enough to replicate")
    state = parameters * (TRAINING_BYTES_A_PARAMETER + (REFERENCE_BYTES_A_PARAMETER if reference else 0))
    if device_bytes is None:
        return Choice("ddp", f"no device memory to fit ({_gib(state)} GiB of training state held in RAM)")
    budget = device_bytes * SHARE_OF_DEVICE_FOR_STATE
    if state <= budget:
        return Choice("ddp", f"{_gib(state)} GiB of training state fits half a device ({_gib(device_bytes)} GiB)")
    return Choice("fsdp2", f"{_gib(state)} GiB of training state is more than half a device "
                           f"({_gib(device_bytes)} GiB): sharded over {processes} processes")


def _refuse_impossible(setting: str, processes: int, lora: bool) -> None:
    if problem := impossible_setting(setting, processes, lora):
        raise DistributedSettingError(problem)


def _gib(size: float) -> str:
    return f"{size / 2**30:.1f}"
