"""The async GRPO trainer: rollouts stream in from vLLM while the training loop consumes them.

    python -m worker.trainer --spec spec.json      or      run_trainer(spec_dict)

Given a launch spec it loads the policy, starts (or joins) a vLLM server, runs
the rollout worker in the background and trains until max_steps, a cancel
request, or an error — reporting metrics, samples, checkpoints and status to
the control plane throughout. A run is three parts: start-up builds and starts
everything (startup/), the loop trains (loop/), and the lifecycle stops what
started, in reverse order, however the run ends (lifecycle.py).
"""
import logging
from pathlib import Path

from worker.trainer.checkpoints.keeping import keeper_for
from worker.trainer.distributed.crew import Crew
from worker.trainer.distributed.peer_loss import lost_a_peer
from worker.trainer.inference.completions_client import lost_its_server
from worker.trainer.distributed.topology import SINGLE, Topology
from worker.trainer.follower import Follower
from worker.trainer.lifecycle import Lifecycle
from worker.trainer.loop.training_loop import TrainingLoop
from worker.trainer.processes.lifetime import kill_me_with_parent
from worker.trainer.reporting.session import ReportingSession
from worker.trainer.spec import LaunchSpec
from worker.trainer.startup.sequence import start_up
from worker.trainer.startup.starting_run import StartingRun

log = logging.getLogger("worker.trainer")


class Trainer:
    """Rank 0's trainer, the only one in a single process: with several, the others follow its
    orders (follower.py) through `crew`."""

    def __init__(self, spec: LaunchSpec, topology: Topology = SINGLE):
        self.spec, self.topology = spec, topology
        self.crew = Crew(topology, secret=spec.orders_secret)
        self.output_dir = Path(spec.output_dir)
        self.output_dir.mkdir(parents=True, exist_ok=True)
        self.report = ReportingSession(spec.ingest, f"trainer:{spec.attempt}", self.output_dir / "events")
        # Listed by an event on the control plane's disk, else uploaded to it (checkpoints/keeping.py).
        self.checkpoints = keeper_for(spec, self.output_dir, self.report)
        self.lifecycle = Lifecycle()

    def run(self) -> str:
        """succeeded, cancelled or failed; what started is stopped before it returns."""
        self.lifecycle.started(self.report.start(), self.report.close)
        self.lifecycle.started(self.checkpoints, self.checkpoints.close)
        self.report.status("starting")
        try:
            ready = start_up(StartingRun(self.spec, self.topology, self.output_dir, self.report, self.crew,
                                         self.lifecycle), self.checkpoints)
            self.report.status("running")
            outcome = TrainingLoop(ready).run()
        except Exception as exc:
            log.exception("training failed")
            reason = f"{type(exc).__name__}: {exc}"
            self.report.log(reason, level="error")
            if self.topology.machines > 1 and lost_a_peer(exc):
                # Left to the worker, which knows the machines: this says an address, not a cause.
                self.report.log("a trainer process on another machine is gone; the worker names it", level="error")
            elif self.spec.inference_urls and lost_its_server(exc):
                self.report.log("a vLLM server on a machine of its own no longer answers; the worker says why",
                                level="error")
            else:
                self.report.status("failed", reason)
            outcome = "failed"
        finally:
            self.lifecycle.stop_all()
        return outcome


def run_trainer(spec: dict) -> str:
    """Trains per `spec` (a LaunchSpec as a dict); returns succeeded, cancelled or failed. Under
    torchrun, rank 0 trains and leads; the others follow it (follower.py)."""
    topology = Topology.from_env()
    launch = LaunchSpec.model_validate(spec)
    if topology.several:
        # torchrun starts each process in a session of its own: killing its group (the worker's
        # stop, or the worker dying) would leave the ranks training on, orphaned.
        kill_me_with_parent()
    if not topology.leads:
        return Follower(launch, topology).run()
    return Trainer(launch, topology).run()
