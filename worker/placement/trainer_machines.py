"""The further machines of a trainer over several (trainer_machines): an actor on each that runs
its node rank's torchrun, and what the first machine's supervisor holds of them.

The supervisor on the first machine writes the trainer's spec (with this attempt's secrets) and
hands it to each machine's host over Ray, which the cluster's token guards; the host keeps the run
under its own DATA_DIR where it shares no disk with the control plane, reports its trainer's output
as its own source, and ends its processes when told or when the actor ends.
"""
import json
from dataclasses import dataclass
from pathlib import Path

import ray
from ray.exceptions import ActorUnavailableError, GetTimeoutError, RayActorError

from worker.placement.host import drop_rays_thread_cap, stop_hosts
from worker.placement.order import settings_on_machine
from worker.placement.plan import PlacedMachine
from worker.trainer.checkpoints.run_folder import on_this_worker
from worker.trainer.distributed.launch_failure import SIGTERM, first_failure
from worker.trainer.distributed.rendezvous import Rendezvous, free_port_on
from worker.trainer.processes.groups import ended_how
from worker.trainer.processes.output_lines import log_parts
from worker.trainer.processes.private_files import write_private
from worker.trainer.reporting.session import ReportingSession
from worker.trainer.spec import LaunchSpec
from worker.trainer_process import TrainerProcess, trainer_command

ASK_TIMEOUT_S = 10.0


@ray.remote(max_concurrency=2)  # type: ignore[call-overload]  # ray's overloads omit actor options
class TrainerMachineHost:
    def __init__(self, settings: dict):
        drop_rays_thread_cap()
        self.settings = settings_on_machine(settings, tuple(str(gpu) for gpu in ray.get_gpu_ids()))
        self.trainer: TrainerProcess | None = None
        self.report: ReportingSession | None = None
        self.spec_path: Path | None = None

    def start(self, spec: dict, machines: Rendezvous, node_rank: int) -> None:
        launch = on_this_worker(LaunchSpec.model_validate(spec))
        output = Path(launch.output_dir)
        self.spec_path = output / f"spec-{launch.attempt}-machine-{node_rank}.json"
        write_private(self.spec_path, json.dumps(launch.model_dump(mode="json")))
        self.report = ReportingSession(launch.ingest, f"machine-{node_rank}:{launch.attempt}",
                                       output / "events" / f"machine-{node_rank}",
                                       log_source=f"trainer machine {node_rank}").start()
        gpus = ",".join(self.settings.gpus) or None
        argv, env = trainer_command(self.spec_path, gpus, launch.config.trainer_processes_per_machine,
                                    machines=machines, node_rank=node_rank)
        self.trainer = TrainerProcess(argv, env, output / "logs" / f"trainer-{launch.attempt}-machine-{node_rank}.log",
                                      forward=self._forward, lines_per_s=self.settings.log_lines_per_s).start()

    def _forward(self, line: str) -> None:
        level, source, message = log_parts(line)
        if self.report is not None:  # made before the trainer that forwards its lines
            self.report.log(message, level=level, source=source)

    def failure(self) -> dict | None:
        """How this machine's trainer processes ended, where they failed (None while they run or
        after success), and whether by a signal not torchrun's: a cause, not a peer's casualty."""
        code = self.trainer.exit_code() if self.trainer else None
        if not code:
            return None
        rank = first_failure(list(self.trainer.tail)) if self.trainer else None
        if rank is None:
            return {"text": f"the trainer {ended_how(code)}", "killed": code < 0}
        return {"text": rank.describe(), "killed": rank.exit_code < 0 and rank.exit_code != SIGTERM}

    def stop(self) -> None:
        if self.trainer is not None:
            self.trainer.stop(grace_s=10)
        if self.spec_path is not None:
            self.spec_path.unlink(missing_ok=True)  # its secrets were this attempt's
        if self.report is not None:
            self.report.close()


@dataclass
class TrainerPeers:
    """The hosts of the trainer's further machines, node ranks 1, 2, ... in order, and where each
    is. Addresses are the machines' Ray addresses (`ray start --node-ip-address`): the network the
    operator gave the cluster."""
    hosts: list
    machines: list[PlacedMachine]
    first: PlacedMachine  # the supervisor's, node rank 0

    def rendezvous(self) -> Rendezvous:
        """Called on the first machine: the port is found free there, where the store will listen."""
        addresses = (self.first.address, *(machine.address for machine in self.machines))
        return Rendezvous(addresses, free_port_on(self.first.address))

    def start(self, spec: dict, machines: Rendezvous) -> None:
        ray.get([host.start.remote(spec, machines, rank) for rank, host in enumerate(self.hosts, start=1)],
                timeout=120)

    def failure(self, processes_each: int) -> str | None:
        """The first further machine that is gone or whose trainer's ranks were killed, in words
        naming it and its ranks; not ranks that failed because a peer died (their exit code 1 is
        no cause: the first machine's trainer says what happened there)."""
        for node_rank, (host, machine) in enumerate(zip(self.hosts, self.machines), start=1):
            ranks = f"ranks {node_rank * processes_each} to {(node_rank + 1) * processes_each - 1}" \
                if processes_each > 1 else f"rank {node_rank}"
            try:
                failed = ray.get(host.failure.remote(), timeout=ASK_TIMEOUT_S)
            except (ActorUnavailableError, GetTimeoutError):
                continue  # unreachable for now (Ray says so apart from dead): asked again at the next look
            except RayActorError:
                return f"{machine.lost()} (the trainer's {ranks} ran there)"
            if failed and failed["killed"]:
                return f"{failed['text']} on machine {machine.name}"
        return None

    def stop(self) -> None:
        stop_hosts(self.hosts)
