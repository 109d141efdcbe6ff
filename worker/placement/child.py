"""The Celery task's side of a run on a Ray cluster: the driver in a child process, its outcome back.

Ray is initialised only in that child: the Celery process forks its next task, and Ray does not
survive a fork. The child dies with the task (PDEATHSIG), which frees the run's machine. It runs
from the project's folder: Ray's workers import the project from the driver's working directory.
"""
import dataclasses
import logging
import subprocess
import sys
import tempfile
from pathlib import Path

from worker.placement.order import PlacementOrder
from worker.settings import WorkerSettings
from worker.trainer.processes.lifetime import kill_me_with_parent

log = logging.getLogger(__name__)
PROJECT_ROOT = Path(__file__).resolve().parents[2]


def run_placed(launch: dict, settings: WorkerSettings, supervisor: str | None = None) -> str:
    """Places the run on settings.ray_address and returns its outcome word (`failed` where the
    driver itself died before it could say: its output is then in this worker's log)."""
    with tempfile.TemporaryDirectory(prefix="grpo-placement-") as folder:  # 0700: the order holds the token
        order = PlacementOrder.for_run(launch, settings, Path(folder) / "outcome")
        if supervisor:
            order = dataclasses.replace(order, supervisor=supervisor)
        spec_path = Path(folder) / "order.json"
        order.write(spec_path)
        done = subprocess.run([sys.executable, "-m", "worker.placement.driver", "--spec", str(spec_path)],
                              cwd=PROJECT_ROOT, preexec_fn=kill_me_with_parent, check=False)
        outcome = Path(order.outcome_path)
        if outcome.exists():
            return outcome.read_text(encoding="utf-8").strip()
        log.error("run %s: the placement driver exited with %s before it gave the run's outcome",
                  launch.get("run_id"), done.returncode)
        return "failed"
