"""What a run asks of a Ray cluster, and what the run is told when the cluster cannot give it.

Pure: no Ray here. A run is placed on one machine (one bundle, STRICT_PACK): its vLLM server,
judges and trainer share that machine's GPUs as on a worker of its own. A run whose trainer spans
several machines (trainer_machines) asks one bundle more for each further machine, each on a
machine of its own (STRICT_SPREAD), holding that machine's share of the trainer's processes.
"""
from dataclasses import dataclass

from worker.trainer.config import TrainingConfig


def _count(number: float, unit: str) -> str:
    shown = f"{number:g}"
    return f"{shown} {unit}" if shown == "1" else f"{shown} {unit}s"


@dataclass(frozen=True)
class RunBundle:
    """The resources of the one machine a run needs."""
    cpus: int
    gpus: int

    def resources(self) -> dict[str, float]:
        """As a Ray bundle (a resource of 0 is left out: Ray refuses zero amounts in bundles)."""
        return {"CPU": float(self.cpus), **({"GPU": float(self.gpus)} if self.gpus else {})}

    def describe(self) -> str:
        return f"1 machine with {_count(self.gpus, 'GPU')} and {_count(self.cpus, 'CPU')}"


def gpus_for(config: TrainingConfig) -> int:
    """The GPUs the run takes on its first GPU machine: one, shared by the server and the trainer where
    the config asks one of each and no judge GPUs (worker/gpu_split.py shares it), else
    first_machine_gpus() (vLLM's are not there where it has machines of its own)."""
    shares_one = config.inference_gpus == 1 and not config.judge_gpus and (config.trainer_processes or 1) == 1
    return 1 if shares_one and not config.inference_machines else config.first_machine_gpus()


def bundle_for(config: TrainingConfig, cluster_has_gpus: bool) -> RunBundle:
    """A cluster with GPUs places runs on GPUs; a CPU-only one on a CPU (vLLM and the trainer then
    compute on the machine's cores as on a CPU worker). One CPU: the supervisor's own share."""
    return RunBundle(cpus=1, gpus=gpus_for(config) if cluster_has_gpus else 0)


def trainer_bundle_for(config: TrainingConfig, cluster_has_gpus: bool) -> RunBundle:
    """A further machine of the trainer: its processes, on a GPU each where the cluster has GPUs."""
    return RunBundle(cpus=1, gpus=(config.trainer_processes_per_machine or 1) if cluster_has_gpus else 0)


def inference_bundle_for(config: TrainingConfig, cluster_has_gpus: bool) -> RunBundle:
    """A machine of vLLM's own (inference_machines): one server on its GPUs, or on its CPU."""
    return RunBundle(cpus=1, gpus=config.inference_gpus if cluster_has_gpus else 0)


@dataclass(frozen=True)
class MachinesAsked:
    """Every machine a run needs, all of them or none: the first runs the supervisor and the trainer's
    first processes (and vLLM, unless it has machines of its own); then one for each further node rank
    of the trainer; then one for each vLLM server of inference_machines."""
    bundles: tuple[RunBundle, ...]
    inference_machines: int = 0

    @property
    def strategy(self) -> str:
        return "STRICT_PACK" if len(self.bundles) == 1 else "STRICT_SPREAD"

    def resources(self) -> list[dict[str, float]]:
        return [bundle.resources() for bundle in self.bundles]

    @property
    def trainer_bundles(self) -> tuple[RunBundle, ...]:
        """The trainer's further machines, node ranks 1, 2, ... (the first machine apart)."""
        return self.bundles[1:len(self.bundles) - self.inference_machines]

    @property
    def inference_bundles(self) -> tuple[RunBundle, ...]:
        return self.bundles[len(self.bundles) - self.inference_machines:] if self.inference_machines else ()

    def describe(self) -> str:
        first = self.bundles[0]
        if len(self.bundles) == 1:
            return first.describe()
        role = "the trainer's first processes" + ("" if self.inference_machines else " and vLLM")
        parts = [f"{first.describe()} ({role})"]
        for bundles, what in ((self.trainer_bundles, "for the trainer"), (self.inference_bundles, "for vLLM")):
            if bundles:
                parts.append(f"{len(bundles)} more {bundles[0].describe().removeprefix('1 machine ')} each {what}")
        return f"{len(self.bundles)} machines: " + " and ".join(parts)


def machines_for(config: TrainingConfig, cluster_has_gpus: bool) -> MachinesAsked:
    further = (trainer_bundle_for(config, cluster_has_gpus),) * (config.trainer_machines - 1)
    inference = (inference_bundle_for(config, cluster_has_gpus),) * config.inference_machines
    return MachinesAsked((bundle_for(config, cluster_has_gpus), *further, *inference), config.inference_machines)


@dataclass(frozen=True)
class NodeRoom:
    """One machine of the cluster and what it has free now."""
    name: str
    alive: bool
    cpus_free: float
    gpus_free: float

    def describe(self) -> str:
        if not self.alive:
            return f"{self.name} (lost)"
        return f"{self.name} {_count(self.gpus_free, 'GPU')} {_count(self.cpus_free, 'CPU')} free"


def rooms_of(nodes: list[NodeRoom]) -> str:
    return ", ".join(node.describe() for node in nodes) or "no machines"


def no_room_message(run_id: int, asked: MachinesAsked, address: str, nodes: list[NodeRoom], waited_s: float) -> str:
    """Why a run was not placed, with the numbers a person needs to act on it."""
    rooms = rooms_of(nodes)
    return (f"run {run_id} needs {asked.describe()}; none was free after {waited_s:g} s "
            f"(WORKER_RAY_PLACE_TIMEOUT_S). The cluster at {address} has: {rooms}")


def waiting_message(run_id: int, asked: MachinesAsked, address: str, nodes: list[NodeRoom], waited_s: float,
                    timeout_s: float) -> str:
    """What a run still waiting for its machines is told on its page: the numbers, and how long it will wait."""
    rooms = rooms_of(nodes)
    return (f"run {run_id} is waiting for {asked.describe()} in the Ray cluster at {address}: none is free "
            f"yet ({rooms}); waited {waited_s:.0f} s of {timeout_s:g} s (WORKER_RAY_PLACE_TIMEOUT_S), "
            f"cancel to stop waiting")


@dataclass(frozen=True)
class PlacedMachine:
    """The machine a run was placed on: named when the run is placed, as a lost node is hard to ask about."""
    name: str
    address: str
    node_id: str

    def where(self) -> str:
        return f"machine {self.name} ({self.address}, Ray node {self.node_id[:8]})"

    def lost(self) -> str:
        return f"{self.where()} was lost mid-run"
