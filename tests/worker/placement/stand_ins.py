"""RunSupervisor stand-ins that a RunHost actor builds on the machine a test's run was placed on.

They write what they were given where the test reads it (the run's output folder, on this same
host), so a test sees the run reach its machine without vLLM or a trainer."""
import json
import os
import time
from pathlib import Path


class _StandIn:
    def __init__(self, spec, settings):
        self.spec, self.settings = spec, settings

    def _note_arrival(self) -> None:
        folder = Path(self.spec.output_dir)
        folder.mkdir(parents=True, exist_ok=True)
        arrival = {"gpus": list(self.settings.gpus), "ray_address": self.settings.ray_address, "pid": os.getpid(),
                   "cancel_grace_s": self.settings.cancel_grace_s,
                   "omp_num_threads": os.environ.get("OMP_NUM_THREADS")}
        (folder / "arrived.json").write_text(json.dumps(arrival))


class FinishingSupervisor(_StandIn):
    def run(self) -> str:
        self._note_arrival()
        return "finished"


class HangingSupervisor(_StandIn):
    """A run that lasts until its machine is taken away."""

    def run(self) -> str:
        self._note_arrival()
        time.sleep(600)
        return "finished"
