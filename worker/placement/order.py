"""The order the Celery task hands its driver child: where the cluster is, the run, the settings.

A file, not arguments: it holds the run's ingest token, so it is written readable by this user
alone (and removed by the task when the driver ends). No Ray imported here: the Celery task reads
and writes it.
"""
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from worker.settings import WorkerSettings
from worker.trainer.processes.private_files import write_private

DEFAULT_SUPERVISOR = "worker.supervisor:RunSupervisor"


@dataclass(frozen=True)
class PlacementOrder:
    address: str             # the Ray cluster (WORKER_RAY_ADDRESS)
    place_timeout_s: float   # WORKER_RAY_PLACE_TIMEOUT_S
    launch: dict             # the run's LaunchSpec, as the task received it
    settings: dict           # the Celery worker's WorkerSettings; the machine's own GPUs replace its gpus
    outcome_path: str        # where the driver writes the run's outcome word
    # What runs the run on the machine, as module:callable taking (LaunchSpec, WorkerSettings) and
    # returning an object whose run() gives the outcome. Tests name a stand-in.
    supervisor: str = field(default=DEFAULT_SUPERVISOR)
    allow_open_cluster: bool = False  # WORKER_RAY_ALLOW_OPEN_CLUSTER (worker/placement/cluster_door.py)

    @classmethod
    def for_run(cls, launch: dict, settings: WorkerSettings, outcome_path: Path) -> "PlacementOrder":
        if not settings.ray_address:
            raise ValueError("a placement order needs WORKER_RAY_ADDRESS: this worker is not a Ray pool")
        return cls(address=settings.ray_address, place_timeout_s=settings.ray_place_timeout_s, launch=launch,
                   settings=asdict(settings), outcome_path=str(outcome_path),
                   allow_open_cluster=settings.ray_allow_open_cluster)

    def write(self, path: Path) -> None:
        write_private(path, json.dumps(asdict(self)))

    @classmethod
    def read(cls, path: Path) -> "PlacementOrder":
        return cls(**json.loads(Path(path).read_text(encoding="utf-8")))


def settings_on_machine(settings: dict, gpus: tuple[str, ...]) -> WorkerSettings:
    """The Celery worker's settings as the machine a run was placed on uses them: the GPUs Ray gave
    the run, no GPU overrides (they name the Celery machine's GPUs), and no Ray of its own."""
    return WorkerSettings(**{**settings, "gpus": tuple(gpus), "vllm_gpus": None, "trainer_gpus": None,
                             "ray_address": None})
