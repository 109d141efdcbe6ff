"""The weight sync that pushes the trainer's weights into the server, and its first push."""
from worker.trainer.checkpoints.saving import TrainerState
from worker.trainer.distributed.crew import Crew
from worker.trainer.startup.server import ServerConnection
from worker.trainer.startup.starting_run import StartingRun
from worker.trainer.training.setup import TrainingParts
from worker.trainer.weight_sync.backends import make_weight_sync
from worker.trainer.inference.server_api import WeightSyncError
from worker.trainer.weight_sync.interface import WeightSync
from worker.trainer.weight_sync.lora_adapter import ADAPTER_NAME, LoraAdapterSync


def weight_sync_for(run: StartingRun, server: ServerConnection, on_gpu: bool) -> WeightSync:
    """A LoRA run whose server is given the adapter sends it alone (weight_sync/lora_adapter.py),
    whatever the backend; given merged weights, it syncs them as a whole model would."""
    serves_adapter = run.config.serves_adapter("cuda" if on_gpu else "cpu")
    sync = _weight_sync(run, server, "lora_adapter" if serves_adapter else run.config.weight_sync_backend)
    run.lifecycle.started(sync, sync.close)
    return sync


def _weight_sync(run: StartingRun, server: ServerConnection, backend: str) -> WeightSync:
    """The NCCL group spans every GPU of every vLLM engine (weight_sync/nccl.py)."""
    return make_weight_sync(backend, server.url, run.output_dir, pause=server.pause,
                            server_world_size=run.config.inference_gpus,
                            server_engines=run.config.vllm_data_parallel_size, api_key=server.api_key,
                            remote_urls=list(server.remote_urls))


def needs_first_push(run: StartingRun) -> bool:
    """The server may hold older weights than the checkpoint (the supervisor's serves the
    model), and a LoRA run's server has no adapter yet: it is given ours before the first rollout."""
    return bool(run.spec.resume_from or run.spec.init_from or run.config.lora)


def give_server_our_weights(run: StartingRun, server: ServerConnection, sync: WeightSync, crew: Crew,
                            training: TrainingParts, state: TrainerState) -> tuple[WeightSync, str]:
    """The first push; returns the sync to go on with and the name rollouts ask for. A LoRA run's
    adapter goes alone where the server loads adapters, and rollouts then name it; where the
    server refuses, it is given merged weights instead, at this push and every later one."""
    try:
        crew.gather_weights()
        sync.push(training.served_model(), state.model_version)
    except WeightSyncError as exc:
        if not isinstance(sync, LoraAdapterSync):
            raise
        run.warn(f"vLLM did not take the LoRA adapter, so it is given the merged weights at every sync "
                 f"instead: {exc}")
        sync.close()
        merged = _weight_sync(run, server, run.config.weight_sync_backend)
        run.lifecycle.replace(sync, merged, merged.close)
        merged.push(training.served_model(), state.model_version)
        return merged, server.served_name
    return sync, ADAPTER_NAME if isinstance(sync, LoraAdapterSync) else server.served_name
