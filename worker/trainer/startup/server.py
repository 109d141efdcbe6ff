"""The policy's vLLM server: our own, spawned early to load beside the policy, or the
supervisor's; then the connection every rollout, evaluation and weight sync goes through."""
from dataclasses import dataclass

import httpx

from worker.trainer.config import TrainingConfig
from worker.trainer.inference.api_key_guard import bearer
from worker.trainer.inference.cpu_sharing import allowed_cpus, sharing_mode
from worker.trainer.inference.launch import new_api_key
from worker.trainer.inference.readiness import wait_for_health
from worker.trainer.inference.server import VLLMServer
from worker.trainer.inference.time_slicing import GenerationPause
from worker.trainer.models.paths import resolve_model_path
from worker.trainer.spec import LaunchSpec
from worker.trainer.startup.starting_run import StartingRun
from worker.trainer.inference.server_api import ServerPause, VllmAdminClient


@dataclass(frozen=True)
class ServerConnection:
    url: str
    served_name: str  # the model the server serves, as requests name it
    api_key: str | None  # the server asks it of every request but /health
    # One hold on the server's generation for the time slicing of a step and the weight sync
    # inside it, so that the server resumes once (inference/server_api.py).
    pause: ServerPause
    # Servers on machines of their own (inference_machines), url first: rollouts spread over them
    # and weights go to each over HTTP. Empty: the one server at url, on this machine.
    remote_urls: tuple[str, ...] = ()

    @property
    def urls(self) -> tuple[str, ...]:
        return self.remote_urls or (self.url,)


def server_model(spec: LaunchSpec, config: TrainingConfig) -> str:
    """What our own vLLM loads: the checkpoint resumed or started from, else the model, resolved
    (a path the operator does not allow is refused: models/paths.py). A LoRA checkpoint holds the
    adapter alone: the server starts from the base model and is given the merged weights (or
    the adapter) before the first rollout."""
    checkpoint = spec.resume_from or spec.init_from
    return checkpoint if checkpoint and not config.lora else resolve_model_path(spec.model)


def spawn_server(run: StartingRun) -> VLLMServer | None:
    """None: the supervisor started the server (the spec's inference_url)."""
    if run.spec.inference_url is not None:
        return None
    server = VLLMServer.for_config(server_model(run.spec, run.config), run.config,
                                   log_path=run.output_dir / "logs" / f"vllm-{run.spec.attempt}.log",
                                   api_key=new_api_key())
    run.lifecycle.started(server, server.stop)
    return server.start()


def join_server(run: StartingRun, own: VLLMServer | None) -> ServerConnection:
    """Waits for the server (ours or the supervisor's) to answer, then connects to it."""
    if own is not None:
        own.wait_until_healthy()
        run.report.log(f"vLLM ready {own.seconds_since_start:.1f} s after it started, at {own.url}")
        url, name, key = own.url, own.served_model_name, own.api_key
    else:
        assert run.spec.inference_url is not None, "spawn_server starts a server of our own where the spec names none"
        url, key = run.spec.inference_url, run.spec.inference_api_key
        for each in run.spec.inference_urls or [url]:
            wait_for_health(each, run.config.vllm_startup_timeout_s, should_stop=run.report.cancel_requested.is_set,
                            api_key=key)
        name = served_name_of(url, key)
    admin = VllmAdminClient(url, api_key=key)
    run.lifecycle.started(admin, admin.close)
    return ServerConnection(url, name, key, ServerPause(admin), tuple(run.spec.inference_urls))


def served_name_of(url: str, api_key: str | None) -> str:
    """The supervisor's server's model name, as it lists it."""
    return httpx.get(f"{url}/v1/models", headers=bearer(api_key), timeout=30).json()["data"][0]["id"]


def cpu_sharing(run: StartingRun, server: ServerConnection, on_gpu: bool) -> tuple[str, GenerationPause]:
    """How vLLM and the trainer share the CPU (inference/cpu_sharing.py), and the pause of
    generation a step takes when they take turns."""
    # vLLM on machines of its own shares no core with the trainer: both run at once.
    mode = "overlap" if server.remote_urls else sharing_mode(run.config.cpu_sharing, on_gpu, len(allowed_cpus()))
    return mode, GenerationPause(server.pause if mode == "take_turns" else None)
