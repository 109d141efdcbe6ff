"""The trainer for one attempt: its spec file (with the secrets made here), its environment, its
folder in shared memory for the weights it writes for vLLM, and node rank 0 started here; where it
spans several machines, their ranks through the hosts Ray placed (worker/placement/trainer_machines.py)."""
import json
import logging
import secrets
from pathlib import Path
from typing import Any, Protocol

from worker.shared_memory_folders import ClaimedFolder, attempt_prefix, remove_orphans
from worker.supervision.gpus import RunGpus
from worker.settings import WorkerSettings
from worker.trainer.distributed.rendezvous import Rendezvous
from worker.trainer.processes.output_lines import log_parts
from worker.trainer.processes.private_files import write_private
from worker.trainer.reporting.session import ReportingSession
from worker.trainer.spec import LaunchSpec
from worker.trainer.training.precision import answer_for_children
from worker.trainer.weight_sync.filesystem import SHARED_MEMORY_ENV, shared_memory_root
from worker.trainer_process import TrainerProcess, trainer_command

log = logging.getLogger(__name__)


class TrainerMachines(Protocol):
    """The trainer's further machines, as the first machine's supervisor holds them (TrainerPeers)."""
    machines: list[Any]  # where node ranks 1, 2, ... run, each with its name

    def rendezvous(self) -> Rendezvous: ...

    def start(self, spec: dict, machines: Rendezvous) -> None: ...

    def failure(self, processes_each: int) -> str | None: ...

    def stop(self) -> None: ...


class RunTrainer:
    def __init__(self, spec: LaunchSpec, settings: WorkerSettings, report: ReportingSession, gpus: RunGpus,
                 further: TrainerMachines | None = None):
        self.spec, self.settings, self.report, self.gpus, self.further = spec, settings, report, gpus, further
        self.process: TrainerProcess | None = None

    @property
    def spec_path(self) -> Path:
        """The trainer's spec: read by each of its processes as it starts, removed when the attempt ends."""
        return Path(self.spec.output_dir) / f"spec-{self.spec.attempt}.json"

    def start(self, servers: dict, shared_memory: ClaimedFolder | None) -> None:
        """`servers`: where its vLLM server(s) answer, and their key (RunServers.for_trainer)."""
        # The secrets the trainer alone holds: made here, for this attempt, never by the control plane.
        spec = self.spec.model_dump(mode="json") | servers | {
            "orders_secret": secrets.token_hex(32),
            "judge_gpu_ids": self.gpus.split.judge_ids}  # where the trainer serves its judges (served.py)
        write_private(self.spec_path, json.dumps(spec))  # it holds them and the run's ingest token
        machines = self.further.rendezvous() if self.further else None
        argv, env = trainer_command(self.spec_path, self.gpus.split.trainer_ids,
                                    self.spec.config.trainer_processes_per_machine, machines=machines)
        # The server was started in the dtype this process found fastest: the trainer takes the
        # same answer, so its weight files match what the server serves.
        env = {**env, **answer_for_children(), **shared_memory_env(shared_memory)}
        log_path = Path(self.spec.output_dir) / "logs" / f"trainer-{self.spec.attempt}.log"
        self.process = TrainerProcess(argv, env, log_path, forward=self._forward_output,
                                      lines_per_s=self.settings.log_lines_per_s).start()
        if self.further and machines is not None:
            self._start_further(self.further, spec, machines)

    def _start_further(self, further: TrainerMachines, spec: dict, machines: Rendezvous) -> None:
        further.start(spec, machines)
        others = ", ".join(f"{rank} on {machine.name}" for rank, machine in enumerate(further.machines, 1))
        self.report.log(f"the trainer spans {machines.machines} machines: node rank 0 here, {others}; "
                        f"its store at {machines.addresses[0]}:{machines.port}")

    def _forward_output(self, line: str) -> None:
        level, source, message = log_parts(line)
        self.report.log(message, level=level, source=source)

    @property
    def spans_machines(self) -> bool:
        return bool(self.further)

    def exit_code(self) -> int | None:
        assert self.process is not None, "watched once started"
        return self.process.exit_code()

    def last_lines(self) -> list[str]:
        assert self.process is not None, "watched once started"
        return list(self.process.tail)

    def further_failure(self) -> str | None:
        """A further machine's ranks killed, or the machine lost; None while they run, or where there are none."""
        processes_each = self.spec.config.trainer_processes_per_machine or 1
        return self.further.failure(processes_each) if self.further else None

    def stop(self) -> None:
        if self.process is not None:
            self.process.stop(grace_s=10)
        if self.further:
            self.further.stop()


def shared_memory_env(folder: ClaimedFolder | None) -> dict[str, str]:
    return {SHARED_MEMORY_ENV: str(folder.path)} if folder is not None else {}


def attempt_shared_memory(spec: LaunchSpec) -> ClaimedFolder | None:
    """A folder in /dev/shm of this attempt's own for the weights the trainer writes for vLLM,
    and the lock that claims it (worker/shared_memory_folders.py): the supervisor removes it when
    the run ends, or the next attempt here once this one was killed; None without /dev/shm."""
    if (root := shared_memory_root()) is None:
        return None
    for orphan in remove_orphans(root):
        log.warning("removed %s, left in shared memory by a killed worker", orphan)
    return ClaimedFolder.make(attempt_prefix(spec.run_id, spec.attempt), root)
