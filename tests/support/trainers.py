"""A Trainer built from a minimal launch spec (no server, no control plane: it reports to
files), the start-up context its phases are given, and the log lines it wrote there."""
import json
from pathlib import Path

from worker.trainer.app import Trainer
from worker.trainer.config import TrainingConfig
from worker.trainer.distributed.crew import Crew
from worker.trainer.distributed.topology import SINGLE
from worker.trainer.lifecycle import Lifecycle
from worker.trainer.models.paths import models_dir
from worker.trainer.reporting.session import ReportingSession
from worker.trainer.rewards.sandbox.pool import SandboxPool
from worker.trainer.spec import LaunchSpec
from worker.trainer.startup.starting_run import StartingRun


class TrainerUnderTest(Trainer):
    @property
    def reward_sandbox(self) -> SandboxPool | None:
        """The sandbox the run started (and its lifecycle stopped), None if it started none."""
        started = self.lifecycle.stopped + self.lifecycle.running
        return next((part for part in started if isinstance(part, SandboxPool)), None)


def spec_for(tmp_path, config: TrainingConfig | None = None, rewards=None) -> LaunchSpec:
    return LaunchSpec.model_validate({
        # A model the operator's folder would hold (models/paths.py), missing: loading it fails.
        "run_id": 1, "model": str(models_dir() / "no-such-model"), "output_dir": str(tmp_path / "out"),
        "dataset": {"kind": "generator", "generator": "arithmetic", "params": {"count": 8}},
        "rewards": rewards or [{"name": "acc", "kind": "builtin", "builtin": "accuracy"}],
        "config": (config or TrainingConfig(max_steps=1)).model_dump(),
    })


def trainer_for(tmp_path, config: TrainingConfig | None = None, rewards=None) -> TrainerUnderTest:
    return TrainerUnderTest(spec_for(tmp_path, config, rewards))


def events_session(tmp_path) -> ReportingSession:
    """The reporting a trainer of these specs writes to tmp_path/out/events (not started)."""
    return ReportingSession(None, "trainer:1", Path(tmp_path) / "out" / "events")


def starting_run(spec: LaunchSpec, report: ReportingSession) -> StartingRun:
    """What start-up's phases are given, for a single process."""
    return StartingRun(spec, SINGLE, Path(spec.output_dir), report, Crew(SINGLE), Lifecycle())


def logged_lines(tmp_path) -> list[str]:
    lines = (tmp_path / "out" / "events" / "events-trainer-1.jsonl").read_text().splitlines()
    return [event["message"] for event in map(json.loads, lines) if event["type"] == "log"]
