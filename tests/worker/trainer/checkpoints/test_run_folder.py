"""Where a worker keeps a run's files: the control plane's folder only where it shares that disk."""
from pathlib import Path

import pytest

from worker.trainer.checkpoints.run_folder import on_this_worker, worker_output_dir
from worker.trainer.spec import LaunchSpec


def spec_for(output_dir: Path, marker: Path | None) -> LaunchSpec:
    return LaunchSpec.model_validate({
        "run_id": 7, "model": "m", "dataset": {"kind": "generator", "generator": "arithmetic"},
        "rewards": [{"name": "acc", "kind": "builtin", "builtin": "accuracy"}], "config": {},
        "output_dir": str(output_dir),
        "shared_disk": {"path": str(marker), "secret": "s" * 24} if marker else None})


@pytest.fixture
def worker_data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("DATA_DIR", str(tmp_path / "worker"))
    return tmp_path / "worker"


def test_a_worker_on_the_control_planes_disk_writes_in_its_run_folder(tmp_path, worker_data_dir):
    marker = tmp_path / "cp" / "runs" / "7" / ".control-plane-disk"
    marker.parent.mkdir(parents=True)
    marker.write_text("s" * 24)
    assert worker_output_dir(spec_for(marker.parent, marker)) == marker.parent


def test_a_worker_elsewhere_keeps_the_run_under_its_own_data_dir(tmp_path, worker_data_dir):
    unreadable = tmp_path / "cp" / "runs" / "7" / ".control-plane-disk"  # not on this worker's disk
    spec = on_this_worker(spec_for(unreadable.parent, unreadable))
    assert spec.output_dir == str(worker_data_dir / "runs" / "7")
    assert not unreadable.parent.exists()


def test_a_spec_that_says_nothing_about_sharing_is_taken_as_written(tmp_path, worker_data_dir):
    assert worker_output_dir(spec_for(tmp_path / "out", None)) == tmp_path / "out"
