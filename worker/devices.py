"""What a worker machine has to run on: its GPUs (name and memory), and its CPU cores and RAM.

A worker announces this to the control plane (worker/inspection.py), which shows it on the
Workers page and checks a new run's GPU count against it (runs/fleet/). The records are
shared with the control plane, so they are plain data with a JSON form and no framework.

GPUs are found by torch.cuda where torch with CUDA is importable (it honours
CUDA_VISIBLE_DEVICES, as the run's processes will), else by nvidia-smi, else there are none.
`python -m worker.devices` prints what this machine reports.
"""
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

MIB = 1024 * 1024
PROJECT_ROOT = Path(__file__).resolve().parent.parent  # where `-m worker.devices` is found


@dataclass(frozen=True)
class Gpu:
    index: int
    name: str
    memory_mib: int

    def to_dict(self) -> dict:
        return {"index": self.index, "name": self.name, "memory_mib": self.memory_mib}

    @classmethod
    def from_dict(cls, data: dict) -> "Gpu":
        return cls(index=int(data["index"]), name=str(data["name"]), memory_mib=int(data["memory_mib"]))


@dataclass(frozen=True)
class Devices:
    gpus: tuple[Gpu, ...]
    cpu_cores: int
    memory_mib: int  # RAM
    source: str  # how the GPUs were looked for: "torch", "nvidia-smi", or "none" (neither is here)

    @property
    def kind(self) -> str:
        return "gpu" if self.gpus else "cpu"

    def to_dict(self) -> dict:
        return {"kind": self.kind, "gpus": [gpu.to_dict() for gpu in self.gpus], "cpu_cores": self.cpu_cores,
                "memory_mib": self.memory_mib, "source": self.source}

    @classmethod
    def from_dict(cls, data: dict) -> "Devices":
        return cls(gpus=tuple(Gpu.from_dict(gpu) for gpu in data.get("gpus", [])), cpu_cores=int(data["cpu_cores"]),
                   memory_mib=int(data["memory_mib"]), source=str(data.get("source", "none")))


def cpu_cores() -> int:
    """The cores this process may run on (a container or taskset may allow fewer than the machine has)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def memory_mib() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // MIB
    except (ValueError, OSError, AttributeError):  # a platform without these names
        return 0


def gpus_from_torch() -> tuple[Gpu, ...] | None:
    """The GPUs torch sees; None where torch is not importable or has no CUDA."""
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    return tuple(Gpu(index, props.name, props.total_memory // MIB)
                 for index in range(torch.cuda.device_count())
                 for props in [torch.cuda.get_device_properties(index)])


def gpus_from_nvidia_smi(timeout_s: float = 20.0) -> tuple[Gpu, ...] | None:
    """The GPUs nvidia-smi lists, narrowed to CUDA_VISIBLE_DEVICES; None where there is no nvidia-smi
    or it fails (no driver)."""
    command = shutil.which("nvidia-smi")
    if command is None:
        return None
    try:
        listing = subprocess.run([command, "--query-gpu=index,uuid,name,memory.total", "--format=csv,noheader,nounits"],
                                 capture_output=True, text=True, timeout=timeout_s, check=True).stdout
    except (subprocess.SubprocessError, OSError):
        return None
    rows = [[part.strip() for part in line.split(",")] for line in listing.splitlines() if line.strip()]
    visible = [row for row in rows if _is_visible(row[0], row[1])]
    return tuple(Gpu(position, name, int(float(memory))) for position, (_, _, name, memory) in enumerate(visible))


def _is_visible(index: str, uuid: str) -> bool:
    """Whether CUDA_VISIBLE_DEVICES (indices or UUIDs, when set) lets CUDA programs see this GPU."""
    listed = os.environ.get("CUDA_VISIBLE_DEVICES")
    if listed is None:
        return True
    entries = [entry.strip() for entry in listed.split(",") if entry.strip()]
    return any(entry == index or (entry.startswith("GPU-") and uuid.startswith(entry)) for entry in entries)


def probe(use_torch: bool = True) -> Devices:
    gpus, source = (gpus_from_torch() if use_torch else None), "torch"
    if gpus is None:
        gpus, source = gpus_from_nvidia_smi(), "nvidia-smi"
    if gpus is None:
        gpus, source = (), "none"
    return Devices(gpus=gpus, cpu_cores=cpu_cores(), memory_mib=memory_mib(), source=source)


def probe_in_child(timeout_s: float = 120.0) -> Devices:
    """`probe()` in a child process, so that the worker never imports torch nor initialises CUDA
    itself: that would hold a CUDA context (memory) on its GPUs for as long as it lives, leave
    torch's memory in the process that forks every task, and make forked children unable to use
    CUDA. Where the child fails, the GPUs are looked for with nvidia-smi from here instead."""
    try:
        done = subprocess.run([sys.executable, "-m", "worker.devices"], capture_output=True, text=True,
                              cwd=PROJECT_ROOT, timeout=timeout_s, check=True)
        return Devices.from_dict(json.loads(done.stdout.strip().splitlines()[-1]))
    except (subprocess.SubprocessError, OSError, ValueError, KeyError, IndexError):
        return probe(use_torch=False)


if __name__ == "__main__":
    print(json.dumps(probe().to_dict()))
