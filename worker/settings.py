"""A worker machine's own settings, from its environment (no Django here).

A run's config splits the worker's GPUs between the inference server and the trainer
(worker/gpu_split.py); WORKER_VLLM_GPUS / WORKER_TRAINER_GPUS override either side
(CUDA_VISIBLE_DEVICES lists, e.g. "0" and "1,2,3"), and may name the same GPUs to share them.
WORKER_RAY_ADDRESS makes the worker's pool a Ray cluster (worker/placement/): each run is placed
on one of its machines instead of this one, unless the cluster lets in anyone who reaches it
(worker/placement/cluster_door.py) and WORKER_RAY_ALLOW_OPEN_CLUSTER does not say that is meant.
"""
import os
from dataclasses import dataclass

from worker.gpu_split import worker_gpus


class WorkerSettingsError(ValueError):
    pass


def _gpu_list(name: str) -> str | None:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return None
    parts = [part.strip() for part in raw.split(",")]
    if not all(part.isdigit() for part in parts):
        raise WorkerSettingsError(f"{name}={raw!r} must be GPU indices separated by commas, e.g. 0,1")
    return ",".join(parts)


def _seconds(name: str, default: float) -> float:
    raw = os.environ.get(name, "").strip()
    try:
        return float(raw) if raw else default
    except ValueError:
        raise WorkerSettingsError(f"{name}={raw!r} is not a number of seconds") from None


def _ray_address(name: str) -> str | None:
    """Empty: no Ray, runs start on this machine. Else `auto` (the Ray started on this machine)
    or the head's host:port, as `ray.init(address=...)` takes it."""
    raw = os.environ.get(name, "").strip()
    if not raw or raw == "auto":
        return raw or None
    host, _, port = raw.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        raise WorkerSettingsError(f"{name}={raw!r} must be a Ray head's host:port (e.g. 10.0.0.5:6379) or auto")
    return raw


def _flag(name: str) -> bool:
    raw = os.environ.get(name, "").strip().lower()
    if raw in ("", "0", "false", "no"):
        return False
    if raw in ("1", "true", "yes"):
        return True
    raise WorkerSettingsError(f"{name}={raw!r} must be 1 or 0 (true or false)")


def _positive_seconds(name: str, default: float) -> float:
    value = _seconds(name, default)
    if value <= 0:
        raise WorkerSettingsError(f"{name}={value} must be a positive number of seconds")
    return value


@dataclass(frozen=True)
class WorkerSettings:
    vllm_gpus: str | None
    trainer_gpus: str | None
    cancel_grace_s: float      # how long a cancelled trainer has to checkpoint and exit
    log_lines_per_s: float     # child output forwarded as log events, at most this fast
    gpus: tuple[str, ...] = ()  # what this worker may use (CUDA_VISIBLE_DEVICES, else nvidia-smi); (): none
    ray_address: str | None = None   # a Ray cluster the runs are placed on; None: this machine
    ray_place_timeout_s: float = 600.0  # how long a run waits for a machine of the cluster before it fails
    ray_allow_open_cluster: bool = False  # place runs on a cluster that asks no token (a network only you reach)

    @classmethod
    def from_env(cls) -> "WorkerSettings":
        return cls(vllm_gpus=_gpu_list("WORKER_VLLM_GPUS"), trainer_gpus=_gpu_list("WORKER_TRAINER_GPUS"),
                   cancel_grace_s=_seconds("WORKER_CANCEL_GRACE_S", 20.0),
                   log_lines_per_s=_seconds("WORKER_LOG_LINES_PER_S", 20.0), gpus=tuple(worker_gpus()),
                   ray_address=_ray_address("WORKER_RAY_ADDRESS"),
                   ray_place_timeout_s=_positive_seconds("WORKER_RAY_PLACE_TIMEOUT_S", 600.0),
                   ray_allow_open_cluster=_flag("WORKER_RAY_ALLOW_OPEN_CLUSTER"))
