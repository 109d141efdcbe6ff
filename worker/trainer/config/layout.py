"""The arithmetic of where a run's processes and GPUs go: how many GPUs vLLM, the judges and the
trainer take, over how many machines, and the knob combinations that cannot run whatever the
machine (what a pool's GPUs allow is checked against the fleet by the control plane, runs/fleet/).

TrainingConfig takes these as a base class: its fields are the knobs, this reads them.
"""
from collections.abc import Iterator
from typing import TYPE_CHECKING, Literal


def impossible_setting(setting: str, processes: int | None, lora: bool) -> str | None:
    """Why `distributed=setting` cannot run on `processes` (None: not known yet) with or without
    LoRA; None where it can. Refused at creation (the config) and again where the count is known
    (distributed/strategy.py)."""
    if setting in ("ddp", "fsdp2") and processes == 1:
        return (f"distributed={setting} needs at least 2 trainer processes; this trainer has 1 (one per trainer "
                f"GPU, or trainer_processes)")
    if setting == "none" and processes and processes > 1:
        return f"distributed=none trains in one process; this trainer has {processes} (use auto, ddp or fsdp2)"
    if setting == "fsdp2" and lora:
        return "distributed=fsdp2 with LoRA: the frozen base is replicated and the adapter is small; use ddp"
    return None


class GpuLayout:
    if TYPE_CHECKING:  # the knobs read here, declared by the schema (TrainingConfig)
        lora: bool
        gradient_accumulation_steps: int
        weight_sync_backend: Literal["filesystem", "nccl"]
        cpu_sharing: Literal["auto", "split_cores", "take_turns", "overlap"]
        distributed: Literal["auto", "none", "ddp", "fsdp2"]
        trainer_processes: int | None
        trainer_machines: int
        inference_machines: int
        vllm_tensor_parallel_size: int
        vllm_data_parallel_size: int
        judge_gpus: int

    def layout_problems(self) -> Iterator[tuple[str, str]]:
        """(field, message) of each knob combination that cannot run, whatever the machine."""
        yield from self._inference_machines_problems()
        if self.trainer_machines > 1:
            yield from self._machines_problems()
            return
        processes = self.trainer_processes
        if problem := impossible_setting(self.distributed, processes, self.lora):
            yield "distributed", problem
        if processes and self.gradient_accumulation_steps % processes:
            yield "trainer_processes", (
                f"trainer_processes ({processes}) must divide gradient_accumulation_steps "
                f"({self.gradient_accumulation_steps}): each process trains an equal share of a step's micro-batches")

    def _machines_problems(self) -> Iterator[tuple[str, str]]:
        """A trainer over several machines: trainer_processes on each, all of them one job."""
        world = self.trainer_world_size
        if self.distributed == "none":
            yield "distributed", (f"distributed=none trains in one process; trainer_machines={self.trainer_machines} "
                                  f"spans {world} (use auto, ddp or fsdp2)")
        elif problem := impossible_setting(self.distributed, world, self.lora):
            yield "distributed", problem
        if self.gradient_accumulation_steps % world:
            yield "trainer_machines", (
                f"trainer_processes × trainer_machines ({world}) must divide gradient_accumulation_steps "
                f"({self.gradient_accumulation_steps}): each process trains an equal share of a step's micro-batches")

    def _inference_machines_problems(self) -> Iterator[tuple[str, str]]:
        """vLLM on machines of its own takes its weights over HTTP (weight_sync/http_push.py), which
        the whole-model file sync does; the NCCL group and a LoRA adapter's folder are one machine's."""
        if not self.inference_machines:
            return
        if self.weight_sync_backend != "filesystem":
            yield "weight_sync_backend", (
                f"inference_machines={self.inference_machines} pushes the weights to each vLLM machine over HTTP: "
                f"use filesystem (nccl's group is opened with a server on the trainer's machine)")
        if self.lora:
            yield "lora", (f"inference_machines={self.inference_machines} is not offered for LoRA runs yet: their "
                           "servers load adapters from the trainer's disk; use inference_machines=0")
        if self.cpu_sharing not in ("auto", "overlap"):
            yield "cpu_sharing", (f"cpu_sharing {self.cpu_sharing} shares a machine's cores between vLLM and the "
                                  f"trainer; with inference_machines={self.inference_machines} they have machines "
                                  "of their own: use auto or overlap")

    def machines_asked(self) -> str:
        """The knobs that ask several machines of a Ray pool, as a person set them ("" for none)."""
        asked = [f"config.trainer_machines is {self.trainer_machines}"] if self.trainer_machines > 1 else []
        if self.inference_machines:
            asked.append(f"config.inference_machines is {self.inference_machines}")
        return " and ".join(asked)

    @property
    def trainer_processes_per_machine(self) -> int | None:
        """trainer_processes; over several machines, one on each where it is empty."""
        return self.trainer_processes or (1 if self.trainer_machines > 1 else None)

    @property
    def trainer_world_size(self) -> int:
        """Every trainer process of a run over several machines (on one, it may depend on its GPUs)."""
        return (self.trainer_processes_per_machine or 1) * self.trainer_machines

    @property
    def inference_gpus(self) -> int:
        """GPUs the vLLM server takes: tensor parallel × data parallel."""
        return self.vllm_tensor_parallel_size * self.vllm_data_parallel_size

    def gpus_needed(self) -> int:
        """GPUs a worker needs for this run on GPUs: the server's, the judges' and one per trainer process."""
        return self.inference_gpus + self.judge_gpus + (self.trainer_processes or 1)

    def first_machine_gpus(self) -> int:
        """The GPUs of the trainer's first machine: gpus_needed() less vLLM's where it has machines of its own."""
        return self.gpus_needed() - (self.inference_gpus if self.inference_machines else 0)

    def gpu_layout(self) -> str:
        return f"tensor parallel {self.vllm_tensor_parallel_size} × data parallel {self.vllm_data_parallel_size}"

    def gpus_needed_reason(self) -> str:
        """What a worker's GPU count is refused against, in words: the server's share and the trainer's."""
        judges = f", judges {self.judge_gpus}" if self.judge_gpus else ""
        if self.inference_machines:
            return (f"the config needs {self.first_machine_gpus()} GPUs on the trainer's first machine (trainer "
                    f"{self.trainer_processes or 1}{judges}; vLLM's {self.inference_gpus} are on each of its "
                    f"{self.inference_machines} machine(s))")
        return (f"the config needs {self.gpus_needed()} GPUs (vLLM {self.inference_gpus} = {self.gpu_layout()}, "
                f"trainer {self.trainer_processes or 1}{judges})")

    def trainer_processes_on(self, gpus: int) -> int:
        """trainer_processes, or where empty one per GPU of the `gpus` given, as many as divide
        gradient_accumulation_steps (each process trains an equal share of a step's micro-batches)."""
        if self.trainer_processes:
            return self.trainer_processes
        return max(count for count in range(1, max(gpus, 1) + 1) if self.gradient_accumulation_steps % count == 0)
