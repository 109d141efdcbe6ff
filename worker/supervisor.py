"""Runs one training run on this worker: the vLLM server, the trainer, and the watch over both.

Everything it learns goes to the control plane through the ingest API (never
the database): `starting` when it begins, the children's output as log lines,
and `failed` with the last lines of whichever child died. The trainer itself
reports `running` and how it ended; a cancel reaches both through heartbeat
replies, and the trainer saves a checkpoint before it stops. Each step is a
concern of its own under worker/supervision/; this is their order.
"""
import logging
from pathlib import Path

from worker.settings import WorkerSettings
from worker.shared_memory_folders import ClaimedFolder
from worker.supervision.endings import Ending
from worker.supervision.gpus import RunGpus
from worker.supervision.leftovers import deliver_trainer_leftovers
from worker.supervision.refusals import refusal_here, still_wanted
from worker.supervision.servers import InferenceMachines, RunServers
from worker.supervision.trainer_launch import RunTrainer, TrainerMachines, attempt_shared_memory
from worker.supervision.watch import RunWatch
from worker.trainer.checkpoints.run_folder import on_this_worker
from worker.trainer.reporting.session import ReportingSession
from worker.trainer.spec import LaunchSpec

log = logging.getLogger(__name__)


class RunSupervisor:
    def __init__(self, spec: LaunchSpec, settings: WorkerSettings, peers: TrainerMachines | None = None,
                 inference: InferenceMachines | None = None):
        """`peers`: the trainer's further machines where it spans several (placement/trainer_machines.py);
        `inference`: vLLM's machines where it has its own (placement/inference_machines.py)."""
        # The control plane's folder for the run, or this worker's own where it does not share that disk.
        self.spec, self.settings = on_this_worker(spec), settings
        self.output_dir = Path(self.spec.output_dir)
        self.report = ReportingSession(spec.ingest, f"supervisor:{spec.attempt}", self.output_dir / "events",
                                       log_source="worker")
        self.gpus = RunGpus(self.spec.config, settings)
        self.servers = RunServers(self.spec, self.report, self.gpus, elsewhere=inference)
        self.trainer = RunTrainer(self.spec, settings, self.report, self.gpus, further=peers)
        self.shared_memory: ClaimedFolder | None = None  # the trainer's weight files for the server, removed at the end
        self.ending: Ending | None = None

    @property
    def spec_path(self) -> Path:
        return self.trainer.spec_path

    def run(self) -> str:
        self.report.start()
        try:
            if not still_wanted(self.spec, self.report):
                return "skipped"
            self.report.status("starting")
            if refusal := refusal_here(self.spec, trainer_machines_given=self.trainer.further is not None,
                                       inference_machines_given=self.servers.elsewhere is not None):
                return Ending.failed(refusal).report_to(self.report)
            # Both load their models at once; the trainer waits for /health itself (and
            # enforces the start-up timeout), so the watch below sees either one die.
            self.servers.start()
            self.shared_memory = attempt_shared_memory(self.spec)
            self.trainer.start(self.servers.for_trainer(), self.shared_memory)
            return self._watch()
        except Exception as exc:
            log.exception("run %s failed in the supervisor", self.spec.run_id)
            self.report.status("failed", f"{type(exc).__name__}: {exc}")
            return "failed"
        finally:
            self._end_attempt()

    def _watch(self) -> str:
        """Until the run ends; how it ended, reported."""
        self.ending = RunWatch(self.trainer, self.servers, self.report.cancel_requested,
                               self.settings.cancel_grace_s).until_ended()
        return self.ending.report_to(self.report)

    def _end_attempt(self) -> None:
        """The children stopped, then what they leave: the shared-memory folder (a killed trainer
        leaves its copy of the model there), the spec file (its secrets were this attempt's), and
        what a finished trainer could not deliver."""
        self.trainer.stop()
        self.servers.stop()
        if self.shared_memory is not None:
            self.shared_memory.remove()
        self.spec_path.unlink(missing_ok=True)
        if self.ending is not None and self.ending.trainer_finished:
            deliver_trainer_leftovers(self.spec, self.report)
        self.report.close()
