"""Which way the trainer's processes share the model: the `distributed` knob's auto rule.

Full fine-tuning with AdamW in fp32 keeps 16 bytes a parameter (weights, gradients and two
moments) before activations; DDP holds all of it in every process, FSDP2 a 1/N share of it.
auto shards once that state would take more than half a device, so that DDP still leaves the
other half for activations; a LoRA adapter's state is tiny, so LoRA replicates.
"""
from dataclasses import dataclass

TRAINING_BYTES_A_PARAMETER = 16
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
                    device_bytes: int | None) -> Choice:
    """`setting` (auto, none, ddp, fsdp2) for `processes` trainer processes; `parameters`: the
    policy's, `device_bytes`: one device's memory (None: unknown, a CPU)."""
    if setting != "auto":
        _refuse_impossible(setting, processes, lora)
        return Choice(setting, "as configured")
    if processes == 1:
        return Choice("none", "one process")
    if lora:
        return Choice("ddp", "a LoRA adapter's training state is small enough to replicate")
    state = parameters * TRAINING_BYTES_A_PARAMETER
    if device_bytes is None:
        return Choice("ddp", f"no device memory to fit ({_gib(state)} GiB of training state held in RAM)")
    budget = device_bytes * SHARE_OF_DEVICE_FOR_STATE
    if state <= budget:
        return Choice("ddp", f"{_gib(state)} GiB of training state fits half a device ({_gib(device_bytes)} GiB)")
    return Choice("fsdp2", f"{_gib(state)} GiB of training state is more than half a device "
                           f"({_gib(device_bytes)} GiB): sharded over {processes} processes")


def _refuse_impossible(setting: str, processes: int, lora: bool) -> None:
    if setting in ("ddp", "fsdp2") and processes < 2:
        raise DistributedSettingError(f"distributed={setting} needs at least 2 trainer processes; this trainer "
                                      f"has {processes} (one per trainer GPU, or trainer_processes)")
    if setting == "none" and processes > 1:
        raise DistributedSettingError(f"distributed=none trains in one process; this trainer has {processes}")
    if setting == "fsdp2" and lora:
        raise DistributedSettingError("distributed=fsdp2 with LoRA: the frozen base is replicated and the adapter "
                                      "is small; use ddp")


def _gib(size: float) -> str:
    return f"{size / 2**30:.1f}"
