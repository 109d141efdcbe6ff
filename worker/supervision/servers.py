"""The run's vLLM: one server here on the server's share of the GPUs, or one on each of vLLM's
machines where it has its own (worker/placement/inference_machines.py). Each asks a key made for
this attempt, which the trainer alone is told; the trainer waits for /health itself."""
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from worker.supervision.endings import how_server_ended
from worker.supervision.gpus import RunGpus
from worker.supervision.model_here import prepared_model
from worker.trainer.reporting.session import ReportingSession
from worker.trainer.spec import LaunchSpec
from worker.trainer.training.precision import answer_for_children

if TYPE_CHECKING:
    from worker.trainer.inference.server import VLLMServer

TAIL_LINES = 30


class InferenceMachines(Protocol):
    """vLLM's machines, as the first machine's supervisor holds them (InferencePeers)."""

    def start(self, spec: dict, api_key: str, environment: dict[str, str]) -> list[str]: ...

    def describe(self, urls: list[str]) -> str: ...

    def failure(self) -> tuple[str, list[str]] | None: ...

    def stop(self) -> None: ...


class RunServers:
    def __init__(self, spec: LaunchSpec, report: ReportingSession, gpus: RunGpus,
                 elsewhere: InferenceMachines | None = None):
        self.spec, self.report, self.gpus, self.elsewhere = spec, report, gpus, elsewhere
        self.here: VLLMServer | None = None
        self.urls: list[str] = []  # the servers on vLLM's machines, where it has machines of its own
        self.key: str | None = None

    def start(self) -> None:
        from worker.trainer.inference.launch import new_api_key
        from worker.trainer.inference.server import VLLMServer
        from worker.trainer.models.paths import resolve_model_path

        if self.elsewhere:
            self._start_elsewhere(self.elsewhere, new_api_key())
            return
        model = resolve_model_path(prepared_model(self.spec))
        server = VLLMServer.for_config(model, self.spec.config, gpu_ids=self.gpus.split.server_ids,
                                       log_path=Path(self.spec.output_dir) / "logs" / f"vllm-{self.spec.attempt}.log",
                                       api_key=new_api_key())  # the trainer alone is told it
        self.here = server
        server.start()
        server.when_healthy(lambda seconds: self._note_ready(server.url, seconds))

    def _start_elsewhere(self, machines: InferenceMachines, api_key: str) -> None:
        """One server on each of vLLM's machines, all asking the same key; they take the dtype
        this machine's trainer writes weights in."""
        self.urls = machines.start(self.spec.model_dump(mode="json"), api_key, answer_for_children())
        self.key = api_key
        self.report.log(f"vLLM serves on {len(self.urls)} machine(s) of its own: {machines.describe(self.urls)}")

    def _note_ready(self, url: str, seconds: float) -> None:
        self.report.log(f"vLLM answered /health {seconds:.1f} s after it started, at {url}")

    def for_trainer(self) -> dict:
        """Where the trainer finds its server(s), and their key: fields of its spec."""
        if self.here is not None:
            return {"inference_url": self.here.url, "inference_api_key": self.here.api_key}
        return {"inference_url": self.urls[0], "inference_urls": self.urls, "inference_api_key": self.key}

    def failure(self) -> tuple[str, list[str]] | None:
        """How the server (or one of vLLM's machines) ended, and its last lines; None while all run."""
        if self.elsewhere:
            return self.elsewhere.failure()
        assert self.here is not None, "watched once started"
        if self.here.running():
            return None
        code = self.here.exit_code()
        assert code is not None  # no longer running: it exited
        return how_server_ended(code), self.here.output_tail(TAIL_LINES)

    def elsewhere_failure(self) -> tuple[str, list[str]] | None:
        """How one of vLLM's machines' servers ended; None while they run, or where it has none."""
        return self.elsewhere.failure() if self.elsewhere else None

    def stop(self) -> None:
        if self.here is not None:
            self.here.stop()
        if self.elsewhere:
            self.elsewhere.stop()
