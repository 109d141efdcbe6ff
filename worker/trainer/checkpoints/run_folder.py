"""Where a run's files go on the worker that runs it: events, logs, the trainer's spec, checkpoints.

The launch spec names the control plane's own folder for the run (its RUNS_DIR/<id>). A worker
on the control plane's disk writes there, where the control plane reads them. Any other worker
may not be able to create that path at all (another machine laid out differently, or a user
without access to the control plane's DATA_DIR), and writing into it would only mimic a shared
disk: it keeps the run under its own DATA_DIR/runs/<id> and sends everything back over HTTP.
Light on purpose: the Celery side imports it, and must not pull in torch.
"""
from pathlib import Path

from worker.trainer.models.paths import data_dir
from worker.trainer.spec import LaunchSpec, SharedDiskSpec


def shares_the_control_planes_disk(shared_disk: SharedDiskSpec | None) -> bool:
    """Whether this machine reads the secret the control plane wrote beside the run's folder."""
    if shared_disk is None:
        return False
    try:
        return Path(shared_disk.path).read_text() == shared_disk.secret
    except OSError:
        return False


def worker_output_dir(spec: LaunchSpec) -> Path:
    """The spec's folder where this worker shares the control plane's disk, or where the spec says
    nothing about sharing (a spec written by hand); else the run's folder under this DATA_DIR."""
    if spec.shared_disk is None or shares_the_control_planes_disk(spec.shared_disk):
        return Path(spec.output_dir)
    return data_dir() / "runs" / str(spec.run_id)


def on_this_worker(spec: LaunchSpec) -> LaunchSpec:
    """The spec with output_dir where this worker keeps the run (the trainer it starts reads it)."""
    return spec.model_copy(update={"output_dir": str(worker_output_dir(spec))})
