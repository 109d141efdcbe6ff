"""Which of a worker's GPUs the vLLM server, the served judges and the trainer get, from the run's config.

In that order: vllm_tensor_parallel_size × vllm_data_parallel_size for the server, judge_gpus for
the run's served judges (a second vLLM server, rewards/judges/served.py; with 0 they share the
policy server's), one per trainer process (trainer_processes, or all the rest when that is empty).
A worker with too few GPUs fails the run with the numbers rather than crowd a GPU already taken,
except for the config the control plane never refuses (runs/fleet/gpu_check.py): one server GPU
and one trainer process share a worker's only GPU. WORKER_VLLM_GPUS / WORKER_TRAINER_GPUS
(worker/settings.py) still override either side, the way to share GPUs on purpose.
Pure functions apart from `worker_gpus`, which asks the machine: no CUDA, no torch.
Details: docs/deploying/gpus.md.
"""
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from worker.trainer.config import TrainingConfig

SERVER_OVERRIDE = "WORKER_VLLM_GPUS"
TRAINER_OVERRIDE = "WORKER_TRAINER_GPUS"
SHARING_HINT = f"{SERVER_OVERRIDE} and {TRAINER_OVERRIDE} may name the same GPUs to share them"


class NotEnoughGpus(RuntimeError):
    """The run's config asks for more GPUs than this worker has (or than an override gives)."""


@dataclass(frozen=True)
class GpuSplit:
    """CUDA_VISIBLE_DEVICES entries (indices or UUIDs) for each child; empty: the CPU."""
    server: tuple[str, ...] = ()
    trainer: tuple[str, ...] = ()
    judges: tuple[str, ...] = ()  # config.judge_gpus of them; none: the judges share the server's

    @property
    def server_ids(self) -> str | None:
        return ",".join(self.server) or None

    @property
    def judge_ids(self) -> str | None:
        """The served judges' GPUs: their own, or the policy server's where they have none."""
        return ",".join(self.judges or self.server) or None

    @property
    def trainer_ids(self) -> str | None:
        return ",".join(self.trainer) or None


ON_CPU = GpuSplit()


def _server_wants(config: TrainingConfig) -> str:
    return f"vLLM needs {config.inference_gpus} GPU(s) ({config.gpu_layout()})"


def _judges_want(config: TrainingConfig) -> str:
    return f"served judges need {config.judge_gpus} GPU(s) (judge_gpus)"


def _trainer_wants(config: TrainingConfig) -> str:
    if config.trainer_processes is None:
        return "the trainer needs 1 GPU at least"
    return f"the trainer needs {config.trainer_processes} GPU(s) (trainer_processes)"


def split_gpus(config: TrainingConfig, gpus: Sequence[str], *, server_override: Sequence[str] | None = None,
               trainer_override: Sequence[str] | None = None) -> GpuSplit:
    """The server's, the served judges' and the trainer's GPUs out of `gpus` (the worker's), or
    NotEnoughGpus naming the numbers. A config of one server GPU, no judge GPUs and one trainer
    process shares a worker's only GPU (vLLM takes vllm_gpu_memory_utilization of it), as it
    always has. An override replaces its side (its first GPUs, as many as that side needs) and
    the other sides are taken from the worker's GPUs it does not name; overrides may overlap,
    which shares those GPUs. The judges' come from the worker's GPUs that neither side holds.
    No GPUs and no override: the CPU, as before (`ON_CPU`)."""
    no_override = server_override is None and trainer_override is None
    if not gpus and no_override:
        return ON_CPU
    # vLLM on machines of its own (inference_machines) takes none of this machine's GPUs.
    server_needs = 0 if config.inference_machines else config.inference_gpus
    trainer_needs = config.trainer_processes or 1
    if no_override and len(gpus) == 1 and server_needs == trainer_needs == 1 and not config.judge_gpus:
        return GpuSplit(server=tuple(gpus), trainer=tuple(gpus))  # shared, as runs/fleet/gpu_check.py allows
    take_all = config.trainer_processes is None  # one trainer process per GPU it is given
    if no_override and len(gpus) < server_needs + config.judge_gpus + trainer_needs:
        raise NotEnoughGpus(f"{config.gpus_needed_reason()}; this worker has {len(gpus)}: {_listed(gpus)} "
                            f"({SHARING_HINT})")
    if server_override is not None:
        server = _take(server_override, server_needs, f"{SERVER_OVERRIDE} gives", _server_wants(config))
    else:
        server = _take(_left(gpus, trainer_override), server_needs, f"besides {TRAINER_OVERRIDE} this worker has",
                       _server_wants(config))
    judges = _judge_gpus(config, gpus, [*server, *(trainer_override or ())])
    if trainer_override is not None:
        trainer = _take(trainer_override, trainer_needs, f"{TRAINER_OVERRIDE} gives", _trainer_wants(config),
                        take_all=take_all)
    else:
        trainer = _take(_left(gpus, [*(server_override or server), *judges]), trainer_needs,
                        f"besides {SERVER_OVERRIDE} this worker has", _trainer_wants(config), take_all=take_all)
    if take_all:  # one process per GPU, as many as split a step evenly (config.trainer_processes_on)
        trainer = trainer[:config.trainer_processes_on(len(trainer))]
    return GpuSplit(server=tuple(server), trainer=tuple(trainer), judges=tuple(judges))


def _judge_gpus(config: TrainingConfig, gpus: Sequence[str], taken: Sequence[str]) -> list[str]:
    """config.judge_gpus of the worker's GPUs that the server and the trainer's override leave."""
    if not config.judge_gpus:
        return []
    return _take(_left(gpus, taken), config.judge_gpus, "besides the vLLM server's and the trainer's this worker has",
                 _judges_want(config))


def _listed(gpus: Sequence[str]) -> str:
    return ",".join(gpus) or "none"


def _left(gpus: Sequence[str], taken: Sequence[str] | None) -> list[str]:
    unavailable = set(taken or ())
    return [gpu for gpu in gpus if gpu not in unavailable]


def _take(available: Sequence[str], needed: int, having: str, wanting: str, take_all: bool = False) -> list[str]:
    """The first `needed` of `available` (all of them with `take_all`), or NotEnoughGpus."""
    if len(available) < needed:
        raise NotEnoughGpus(f"{wanting}; {having} {len(available)}: {_listed(available)} ({SHARING_HINT})")
    return list(available) if take_all else list(available[:needed])


def parse_gpu_list(raw: str) -> list[str]:
    """CUDA_VISIBLE_DEVICES entries in order. CUDA stops at the first invalid entry; "-1" (or
    any negative index) is the usual way to hide every GPU."""
    entries = []
    for entry in (part.strip() for part in raw.split(",")):
        if not entry or entry.startswith("-"):
            break
        entries.append(entry)
    return entries


def nvidia_smi_gpus() -> list[str]:
    """The indices of the GPUs nvidia-smi lists (worker/devices.py reads it, for the Workers page
    too); none where it is missing or fails (a CPU machine). Asked only where
    CUDA_VISIBLE_DEVICES is unset, so its positions are nvidia-smi's own indices."""
    from worker.devices import gpus_from_nvidia_smi

    return [str(gpu.index) for gpu in gpus_from_nvidia_smi() or ()]


def worker_gpus(environ: Mapping[str, str] = os.environ, list_gpus: Callable[[], list[str]] = nvidia_smi_gpus
                ) -> list[str]:
    """The GPUs this worker may use: CUDA_VISIBLE_DEVICES where the operator set it (its
    entries, which the children's CUDA_VISIBLE_DEVICES must repeat), else what nvidia-smi lists."""
    if "CUDA_VISIBLE_DEVICES" in environ:
        return parse_gpu_list(environ["CUDA_VISIBLE_DEVICES"])
    return list_gpus()


def split_for_device(config: TrainingConfig, device: str, gpus: Sequence[str], *, server_override: str | None = None,
                     trainer_override: str | None = None) -> GpuSplit:
    """`split_gpus` where the installed vLLM serves on GPUs (`device` "cuda"), with the overrides
    as the worker's settings hold them ("0,1" or None). A CPU build serves on the CPU whatever
    the machine has: the overrides pass through as given, as before."""
    server = parse_gpu_list(server_override) if server_override else None
    trainer = parse_gpu_list(trainer_override) if trainer_override else None
    if device != "cuda":
        return GpuSplit(server=tuple(server or ()), trainer=tuple(trainer or ()))
    return split_gpus(config, gpus, server_override=server, trainer_override=trainer)
