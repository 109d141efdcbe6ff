"""vLLM on machines of its own (inference_machines): an actor on each that runs one server there,
listening on the machine's cluster address, and what the first machine's supervisor holds of them.

Each server asks the run's API key on every path but /health (inference/api_key_guard.py) and takes
the trainer's weights over HTTP into a folder of its own (inference/weight_upload.py), removed when
the server stops. It serves the run's model as prepared on its machine; a resumed run's weights
reach it at the trainer's first push, as they reach a server on the trainer's machine.
"""
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import ray
from ray.exceptions import ActorUnavailableError, GetTimeoutError, RayActorError, RayTaskError

from worker.placement.host import drop_rays_thread_cap, stop_hosts
from worker.placement.order import settings_on_machine
from worker.placement.plan import PlacedMachine
from worker.trainer.weight_sync.filesystem import shared_memory_root
from worker.trainer.checkpoints.run_folder import on_this_worker
from worker.trainer.processes.groups import ended_how
from worker.trainer.spec import LaunchSpec

if TYPE_CHECKING:
    from worker.trainer.inference.server import VLLMServer  # imported where a server starts: vLLM is heavy

ASK_TIMEOUT_S = 10.0
START_TIMEOUT_S = 900.0  # the default model is prepared once on a machine that never had it
TAIL_LINES = 30
SERVER_STOP_GRACE_S = 20.0  # then killed: the whole stop fits in stop_hosts' wait (60 s)


class InferenceStartError(RuntimeError):
    """A server of vLLM's machines did not start: which one, where, and why."""


def upload_parent() -> Path:
    """/dev/shm where it exists: the weights are written to memory, as the trainer's are."""
    return shared_memory_root() or Path(tempfile.gettempdir())


@ray.remote(max_concurrency=2)  # type: ignore[call-overload]  # ray's overloads omit actor options
class InferenceHost:
    def __init__(self, settings: dict):
        drop_rays_thread_cap()
        self.settings = settings_on_machine(settings, tuple(str(gpu) for gpu in ray.get_gpu_ids()))
        self.server: VLLMServer | None = None
        self.upload_folder: Path | None = None

    def start(self, spec: dict, engine: int, api_key: str, environment: dict[str, str]) -> str:
        """Starts engine number `engine`'s server; its URL. `environment`: what the first machine's
        children are told (the dtype it chose), so the weights it is sent match what it serves."""
        from worker.trainer.config import DEFAULT_MODEL
        from worker.trainer.inference.server import VLLMServer
        from worker.trainer.models.paths import resolve_model_path

        launch = on_this_worker(LaunchSpec.model_validate(spec))
        os.environ.update(environment)
        if launch.model == DEFAULT_MODEL:
            from worker.trainer.models.prepare import prepare_default_model

            prepare_default_model()
        self.upload_folder = Path(tempfile.mkdtemp(prefix=f"grpo-run-{launch.run_id}-weights-", dir=upload_parent()))
        # The machine is the server's alone: no cores kept back for a trainer.
        config = launch.config.model_copy(update={"cpu_sharing": "overlap"})
        log = Path(launch.output_dir) / "logs" / f"vllm-{launch.attempt}-engine-{engine}.log"
        self.server = VLLMServer.for_config(resolve_model_path(launch.model), config,
                                            host=ray.util.get_node_ip_address(), log_path=log,
                                            gpu_ids=",".join(self.settings.gpus) or None, api_key=api_key,
                                            upload_folder=str(self.upload_folder)).start()
        return self.server.url

    def ended(self) -> dict | None:
        """How the server ended, with its last lines; None while it runs."""
        if self.server is None or self.server.running():
            return None
        code = self.server.exit_code()
        if code is None:  # never started
            return None
        return {"text": f"the vLLM server {ended_how(code)}", "tail": self.server.output_tail(TAIL_LINES)}

    def stop(self) -> None:
        """The weights' folder goes first: the caller waits 60 s at most (stop_hosts), then the placement
        group's removal ends this actor, and a slow server's stop must not leave the folder behind."""
        if self.upload_folder is not None:
            shutil.rmtree(self.upload_folder, ignore_errors=True)
        if self.server is not None:
            self.server.stop(grace_s=SERVER_STOP_GRACE_S)


@dataclass
class InferencePeers:
    """The hosts of vLLM's machines, engine 1, 2, ... in order, and where each is."""
    hosts: list
    machines: list[PlacedMachine]

    def start(self, spec: dict, api_key: str, environment: dict[str, str]) -> list[str]:
        """Every server started (not yet ready: the trainer waits for each one's /health); their URLs."""
        started = [host.start.remote(spec, engine, api_key, environment)
                   for engine, host in enumerate(self.hosts, start=1)]
        urls = []
        for engine, (url, machine) in enumerate(zip(started, self.machines), start=1):
            try:
                urls.append(ray.get(url, timeout=START_TIMEOUT_S))
            except RayTaskError as exc:
                raise InferenceStartError(f"vLLM engine {engine} could not start on machine {machine.name}: "
                                          f"{exc.cause!r}") from None
        return urls

    def describe(self, urls: list[str]) -> str:
        return ", ".join(f"engine {engine} at {url} on machine {machine.name}"
                         for engine, (url, machine) in enumerate(zip(urls, self.machines), start=1))

    def failure(self) -> tuple[str, list[str]] | None:
        """The first server that ended or whose machine is gone, in words naming it; its last lines."""
        for engine, (host, machine) in enumerate(zip(self.hosts, self.machines), start=1):
            try:
                ended = ray.get(host.ended.remote(), timeout=ASK_TIMEOUT_S)
            except (ActorUnavailableError, GetTimeoutError):
                continue  # unreachable for now: asked again at the next look
            except RayActorError:
                return f"{machine.lost()} (vLLM engine {engine} ran there)", []
            if ended:
                return f"{ended['text']} (vLLM engine {engine}, on machine {machine.name})", ended["tail"]
        return None

    def stop(self) -> None:
        stop_hosts(self.hosts)
