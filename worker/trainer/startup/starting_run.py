"""What every start-up phase is given: the spec, where the run writes, whom it reports to,
and where it registers what it starts."""
from dataclasses import dataclass, replace
from pathlib import Path

from worker.trainer.config import TrainingConfig
from worker.trainer.distributed.crew import Crew
from worker.trainer.distributed.topology import Topology
from worker.trainer.lifecycle import Lifecycle
from worker.trainer.reporting.session import ReportingSession
from worker.trainer.spec import LaunchSpec


@dataclass(frozen=True)
class StartingRun:
    spec: LaunchSpec
    topology: Topology
    output_dir: Path
    report: ReportingSession
    crew: Crew  # the other trainer processes (none in a single one)
    lifecycle: Lifecycle

    @property
    def config(self) -> TrainingConfig:
        return self.spec.config

    @property
    def token(self) -> str | None:
        """The run's token, which fetches from the control plane what the run may read."""
        return self.spec.ingest.token if self.spec.ingest else None

    def with_spec(self, spec: LaunchSpec) -> "StartingRun":
        return replace(self, spec=spec)

    def warn(self, message: str) -> None:
        """A warning in the run's log under the trainer's name (a fetch waiting for the control plane, a judge's)."""
        self.report.log(message, level="warning")
