"""A new run's GPU count against the live workers of its pool: refused at creation, naming the
numbers, rather than failed by a worker minutes later (worker/trainer/config/layout.py's gpus_needed)."""
from runs.fleet.asking import current_fleet
from worker.broker import DEFAULT_QUEUE
from worker.trainer.config import TrainingConfig as ConfigSchema


def spans_several_gpus(config: ConfigSchema) -> bool:
    """More than one GPU's worth: a vLLM server over several GPUs, judges on GPUs of their own, or
    several trainer processes."""
    return config.inference_gpus > 1 or config.judge_gpus > 0 or (config.trainer_processes or 1) > 1


def gpu_problems(values: dict) -> dict[str, list[str]]:
    """{"worker_pool": [message]} when the live workers of the run's pool cannot give the config its
    GPUs; empty otherwise. Nothing is refused unless the config spans several GPUs (spans_several_gpus):
    one server GPU and one trainer process also run sharing a GPU, or on the CPU, so the default
    config is never refused and never waits on the broker. Then, counting only the pool's live
    workers that have reported their devices and run their runs themselves (not on a Ray cluster):

    - none (no live worker, a broker that does not answer, workers still looking): not refused,
      a worker may come later;
    - some report GPUs: refused when none of them has gpus_needed() GPUs (the server's, and one
      per trainer process), naming the largest;
    - all are CPU-only: refused when the vLLM server spans several devices, which vLLM on a CPU
      does not do; several trainer processes share the cores, so they are not refused.
    """
    config = ConfigSchema.model_construct(**values)
    if config.machines_asked():
        return _machines_problems(config, values.get("worker_pool") or DEFAULT_QUEUE)
    if not spans_several_gpus(config):
        return {}
    pool = values.get("worker_pool") or DEFAULT_QUEUE
    # A worker that places its runs on a Ray cluster runs none on its own devices: cluster_check.py looks at those.
    reported = [worker.gpu_count for worker in current_fleet().on_pool(pool)
                if worker.devices is not None and worker.cluster is None]
    if not reported:
        return {}
    if any(reported):
        return _short_of_gpus(config, pool, max(reported))
    if config.inference_gpus > 1:
        return {"worker_pool": [f"the config's vLLM needs {config.inference_gpus} GPUs ({config.gpu_layout()}); "
                                f"the live workers on pool {pool!r} have none (CPU only), where vLLM serves with "
                                "tensor and data parallel 1"]}
    return {}


def _short_of_gpus(config: ConfigSchema, pool: str, largest: int) -> dict[str, list[str]]:
    needed = config.gpus_needed()
    if largest >= needed:
        return {}
    return {"worker_pool": [f"{config.gpus_needed_reason()}; the largest worker on pool {pool!r} has {largest}"]}


def _machines_problems(config: ConfigSchema, pool: str) -> dict[str, list[str]]:
    """A trainer over several machines needs a pool that is a Ray cluster: refused where the pool's
    live workers all run their runs themselves (none live: not refused, a cluster may come)."""
    workers = [worker for worker in current_fleet().on_pool(pool) if worker.devices is not None]
    if not workers or any(worker.cluster is not None for worker in workers):
        return {}
    return {"worker_pool": [f"{config.machines_asked()}: a run over several machines runs on a pool that is a "
                            f"Ray cluster (docs/deploying/cluster.md); the "
                            f"{len(workers)} live worker(s) on pool {pool!r} each run their runs on their own machine"]}
