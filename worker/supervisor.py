"""Runs one training run on this worker: the vLLM server, the trainer, and the watch over both.

Everything it learns goes to the control plane through the ingest API (never
the database): `starting` when it begins, the children's output as log lines,
and `failed` with the last lines of whichever child died. The trainer itself
reports `running` and how it ended; a cancel reaches both through heartbeat
replies, and the trainer saves a checkpoint before it stops.
"""
import json
import logging
import secrets
import time
from pathlib import Path

from worker.gpu_split import GpuSplit, split_for_device
from worker.settings import WorkerSettings
from worker.shared_memory_folders import ClaimedFolder, attempt_prefix, remove_orphans
from worker.trainer.distributed.launch_failure import first_failure
from worker.trainer.training.precision import answer_for_children
from worker.trainer.processes.private_files import write_private
from worker.trainer.processes.groups import ended_how
from worker.trainer.reporting.client import IngestClient
from worker.trainer.reporting.reporter import Reporter
from worker.trainer.reporting.session import ReportingSession
from worker.trainer.checkpoints.run_folder import on_this_worker
from worker.trainer.spec import LaunchSpec
from worker.trainer.weight_sync.filesystem import SHARED_MEMORY_ENV, shared_memory_root
from worker.trainer.processes.output_lines import log_parts
from worker.trainer_process import TrainerProcess, trainer_command

log = logging.getLogger(__name__)
WATCH_INTERVAL_S = 0.5
TRAINER_LEFTOVERS_WAIT_S = 300.0  # the control plane away for longer: the run is marked lost
PEER_FAILURE_WAIT_S = 30.0  # a machine lost under the trainer: Ray's health check names it within this


class RunSupervisor:
    def __init__(self, spec: LaunchSpec, settings: WorkerSettings, peers=None, inference=None):
        """`peers`: the trainer's further machines where it spans several (placement/trainer_machines.py);
        `inference`: vLLM's machines where it has its own (placement/inference_machines.py)."""
        self.peers, self.inference = peers, inference
        # The control plane's folder for the run, or this worker's own where it does not share that disk.
        self.spec, self.settings = on_this_worker(spec), settings
        self.output_dir = Path(self.spec.output_dir)
        self.report = ReportingSession(spec.ingest, f"supervisor:{spec.attempt}", self.output_dir / "events",
                                       log_source="worker")
        self.server = self.trainer = None
        self.server_urls: list[str] = []  # vLLM's machines' servers, where it has machines of its own
        self.server_key: str | None = None
        self.gpu_split: GpuSplit | None = None
        self.trainer_finished = False
        self.shared_memory: ClaimedFolder | None = None  # the trainer's weight files for the server, removed at the end

    def run(self) -> str:
        self.report.start()
        try:
            if not self._still_wanted():
                return "skipped"
            self.report.status("starting")
            if refusal := self._machines_missing():
                return self._failed(refusal, [])
            if problems := self._config_problems_here():
                return self._refused_here(problems)
            # Both load their models at once; the trainer waits for /health itself (and
            # enforces the start-up timeout), so the watch below sees either one die.
            self._start_server()
            self.shared_memory = attempt_shared_memory(self.spec)
            self._start_trainer()
            return self._watch()
        except Exception as exc:
            log.exception("run %s failed in the supervisor", self.spec.run_id)
            self.report.status("failed", f"{type(exc).__name__}: {exc}")
            return "failed"
        finally:
            self._stop_children()
            if self.shared_memory is not None:  # a killed trainer leaves its copy of the model there
                self.shared_memory.remove()
            self.spec_path.unlink(missing_ok=True)  # its secrets were this attempt's: gone with it
            self._deliver_trainer_leftovers()
            self.report.close()

    def _deliver_trainer_leftovers(self, timeout_s: float = TRAINER_LEFTOVERS_WAIT_S) -> None:
        """Sends what the trainer reported but could not deliver before it exited (the control
        plane was away as it ended): its last status would otherwise stay on this disk and the
        run would stay `running` until it was marked lost."""
        if not self.trainer_finished or self.spec.ingest is None:
            return  # a trainer that failed or was stopped: the supervisor has said how it ended
        source = f"trainer:{self.spec.attempt}"
        client = IngestClient(self.spec.ingest.url, self.spec.ingest.token, source=source)
        leftovers = Reporter(client, self.output_dir / "events", source=source)
        if leftovers.backlog:
            self.report.log(f"sending {leftovers.backlog} event(s) the trainer could not deliver")
            leftovers.start()
            if not leftovers.close(timeout_s):
                log.warning("run %s: %d trainer event(s) still undelivered", self.spec.run_id, leftovers.backlog)
        else:
            leftovers.outbox.close()
            client.close()

    def _still_wanted(self) -> bool:
        """False for a redelivered message: the run already started, finished or was cancelled."""
        self.report.log(f"worker received run {self.spec.run_id} (attempt {self.spec.attempt})")
        self.report.reporter.flush(timeout_s=60)
        reply = self.report.reporter.last_reply
        if reply is None:
            raise RuntimeError("the control plane did not answer; not starting a run nobody can follow")
        return reply.status == "queued" and not reply.cancel_requested

    def _machines_missing(self) -> str | None:
        """A run over several machines, given none (a worker that runs its runs on its own machine)."""
        config = self.spec.config
        missing = (config.trainer_machines > 1 and self.peers is None) or \
            (config.inference_machines > 0 and self.inference is None)
        if not missing:
            return None
        return (f"{config.machines_asked()}: a run over several machines runs on a pool that is a Ray cluster "
                "(docs/deploying/cluster.md); this worker runs its runs on its own machine")

    def _config_problems_here(self) -> list[tuple[str, str]]:
        """The config against the model on this worker, before anything starts: the schema does not
        read the machine it validates on (worker/trainer/machine_checks.py), and here the model must be."""
        from worker.trainer.machine_checks import problems_here

        config = self.spec.config.model_copy(update={"model": self._prepared_model()})
        return problems_here(config, model_must_be_here=True)

    def _refused_here(self, problems: list[tuple[str, str]]) -> str:
        """Fails the run naming each config field to change and why, with no child started."""
        named = "; ".join(f"config.{field}: {message}" for field, message in problems)
        return self._failed(f"the run's config cannot train on this worker: {named}", [])

    def _start_server(self) -> None:
        from worker.trainer.inference.launch import new_api_key
        from worker.trainer.inference.server import VLLMServer
        from worker.trainer.models.paths import resolve_model_path

        if self.inference:
            self._start_servers_elsewhere(new_api_key())
            return
        model = resolve_model_path(self._prepared_model())
        self.server = VLLMServer.for_config(model, self.spec.config, gpu_ids=self._gpus().server_ids,
                                            log_path=self.output_dir / "logs" / f"vllm-{self.spec.attempt}.log",
                                            api_key=new_api_key())  # the trainer alone is told it
        self.server.start()
        self.server.when_healthy(self._note_server_ready)

    def _start_servers_elsewhere(self, api_key: str) -> None:
        """vLLM on machines of its own: one server on each, all asking the same key, which the
        trainer alone is told; they take the dtype this machine's trainer writes weights in."""
        self.server_urls = self.inference.start(self.spec.model_dump(mode="json"), api_key, answer_for_children())
        self.server_key = api_key
        self.report.log(f"vLLM serves on {len(self.server_urls)} machine(s) of its own: "
                        f"{self.inference.describe(self.server_urls)}")

    def _gpus(self) -> GpuSplit:
        """The server's, the served judges' and the trainer's GPUs, from the run's config
        (worker/gpu_split.py): worked out once, before the server starts; too few fails the run
        with the numbers."""
        if self.gpu_split is None:
            from worker.trainer.inference.launch import VLLMNotInstalledError, installed_device

            try:
                device = installed_device()
            except VLLMNotInstalledError:
                device = "cpu"  # the server's start says what is missing
            self.gpu_split = split_for_device(self.spec.config, device, self.settings.gpus,
                                              server_override=self.settings.vllm_gpus,
                                              trainer_override=self.settings.trainer_gpus)
        return self.gpu_split

    def _note_server_ready(self, seconds: float) -> None:
        self.report.log(f"vLLM answered /health {seconds:.1f} s after it started, at {self.server.url}")

    def _prepared_model(self) -> str:
        from worker.trainer.config import DEFAULT_MODEL

        if self.spec.model == DEFAULT_MODEL:
            from worker.trainer.models.prepare import prepare_default_model

            prepare_default_model()  # quick when already done; needed once per machine
        return self.spec.model

    @property
    def spec_path(self) -> Path:
        """The trainer's spec: read by each of its processes as it starts, removed when the attempt ends."""
        return self.output_dir / f"spec-{self.spec.attempt}.json"

    def _start_trainer(self) -> None:
        spec_path = self.spec_path
        # The secrets the trainer alone holds: made here, for this attempt, never by the control plane.
        spec = self.spec.model_dump(mode="json") | self._servers_for_trainer() | {
            "orders_secret": secrets.token_hex(32),
            "judge_gpu_ids": self._gpus().judge_ids}  # where the trainer serves its judges (served.py)
        write_private(spec_path, json.dumps(spec))  # it holds them and the run's ingest token
        machines = self.peers.rendezvous() if self.peers else None
        argv, env = trainer_command(spec_path, self._gpus().trainer_ids, self.spec.config.trainer_processes_per_machine,
                                    machines=machines)
        # The server was started in the dtype this process found fastest: the trainer takes the
        # same answer, so its weight files match what the server serves.
        env = {**env, **answer_for_children(), **self._shared_memory_env()}
        self.trainer = TrainerProcess(argv, env, self.output_dir / "logs" / f"trainer-{self.spec.attempt}.log",
                                      forward=self._forward_output,
                                      lines_per_s=self.settings.log_lines_per_s).start()
        if self.peers:
            self.peers.start(spec, machines)
            others = ", ".join(f"{rank} on {machine.name}" for rank, machine in enumerate(self.peers.machines, 1))
            self.report.log(f"the trainer spans {machines.machines} machines: node rank 0 here, {others}; "
                            f"its store at {machines.addresses[0]}:{machines.port}")

    def _shared_memory_env(self) -> dict[str, str]:
        return {SHARED_MEMORY_ENV: str(self.shared_memory.path)} if self.shared_memory is not None else {}

    def _servers_for_trainer(self) -> dict:
        if self.server is not None:
            return {"inference_url": self.server.url, "inference_api_key": self.server.api_key}
        return {"inference_url": self.server_urls[0], "inference_urls": self.server_urls,
                "inference_api_key": self.server_key}

    def _forward_output(self, line: str) -> None:
        level, source, message = log_parts(line)
        self.report.log(message, level=level, source=source)

    def _watch(self) -> str:
        cancel_seen_at = None
        while True:
            # The server first: a trainer that fails because vLLM died is not the news.
            if server_failure := self._server_failure():
                return self._failed(*server_failure)
            code = self.trainer.exit_code()
            if code is not None:
                return self._trainer_ended(code)
            # A further machine's ranks killed, or the machine lost; ranks failing as a peer died
            # are the news only once this machine's trainer ends (_trainer_ended).
            if self.peers and (failure := self.peers.failure(self._processes_each())):
                return self._failed(failure, [])
            if self.report.cancel_requested.is_set():
                cancel_seen_at = cancel_seen_at or time.monotonic()
                if time.monotonic() - cancel_seen_at > self.settings.cancel_grace_s:
                    self.report.status("cancelled", "the trainer did not stop in time and was stopped")
                    return "cancelled"
            time.sleep(WATCH_INTERVAL_S)

    def _server_failure(self) -> tuple[str, list[str]] | None:
        """How the server (or one of vLLM's machines) ended, and its last lines; None while all run."""
        if self.inference:
            return self.inference.failure()
        if self.server.running():
            return None
        return f"the vLLM server {ended_how(self.server.exit_code())}", self.server.output_tail(30)

    def _trainer_ended(self, code: int) -> str:
        if code == 0:
            self.trainer_finished = True
            return "finished"  # the trainer reported succeeded or cancelled itself
        # Repeating a failure the trainer already reported changes nothing; this one covers
        # a trainer that could not report (killed, crashed before its reporter started). Of
        # several processes, torchrun's summary names the one that died first.
        tail = list(self.trainer.tail)
        if (self.peers or self.inference) and (failure := self._other_machine_failure_within(PEER_FAILURE_WAIT_S)):
            return self._failed(*failure)  # the cause; this machine's ranks only lost their peers or server
        rank = first_failure(tail)
        return self._failed(rank.describe() if rank else f"the trainer {ended_how(code)}", tail)

    def _processes_each(self) -> int:
        return self.spec.config.trainer_processes_per_machine or 1

    def _other_machine_failure_within(self, wait_s: float) -> tuple[str, list[str]] | None:
        """A further machine's failure and its last lines, waited for a while: this machine's ranks
        fail at their next collective as soon as a peer dies, and at their next rollout or sync
        when vLLM's machine does, before Ray has marked a lost machine dead."""
        deadline = time.monotonic() + wait_s
        while True:
            if self.inference and (failure := self.inference.failure()):
                return failure
            if self.peers and (peer := self.peers.failure(self._processes_each())):
                return peer, list(self.trainer.tail)
            if time.monotonic() >= deadline:
                return None
            time.sleep(1.0)

    def _failed(self, how: str, last_lines: list[str]) -> str:
        """How a child ended, first, in the run's log and its reason; then its last lines."""
        self.report.log(how, level="error")
        self.report.status("failed", f"{how}; its last output:\n" + "\n".join(last_lines) if last_lines else how)
        return "failed"

    def _stop_children(self) -> None:
        if self.trainer is not None:
            self.trainer.stop(grace_s=10)
        if self.peers:
            self.peers.stop()
        if self.server is not None:
            self.server.stop()
        if self.inference:
            self.inference.stop()


def attempt_shared_memory(spec: LaunchSpec) -> ClaimedFolder | None:
    """A folder in /dev/shm of this attempt's own for the weights the trainer writes for vLLM,
    and the lock that claims it (worker/shared_memory_folders.py): the supervisor removes it when
    the run ends, or the next attempt here once this one was killed; None without /dev/shm."""
    if (root := shared_memory_root()) is None:
        return None
    for orphan in remove_orphans(root):
        log.warning("removed %s, left in shared memory by a killed worker", orphan)
    return ClaimedFolder.make(attempt_prefix(spec.run_id, spec.attempt), root)
