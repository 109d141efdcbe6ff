"""The worker checks a run's config against the model on its own disk before it starts anything
(worker/trainer/machine_checks.py): the schema the spec was validated with does not read the machine."""
import json

import pytest

from tests.support.stub_control_plane import StubControlPlane
from worker.settings import WorkerSettings
from worker.supervisor import RunSupervisor
from worker.trainer.config import TrainingConfig
from worker.trainer.spec import LaunchSpec

SETTINGS = WorkerSettings(vllm_gpus=None, trainer_gpus=None, cancel_grace_s=5, log_lines_per_s=100)


@pytest.fixture
def control_plane():
    stub = StubControlPlane()
    stub.status = "queued"  # the run is still wanted: the supervisor goes on to start it
    yield stub
    stub.close()


def launch_spec(tmp_path, url: str, model: str) -> LaunchSpec:
    return LaunchSpec.model_validate({
        "run_id": 7, "model": model, "output_dir": str(tmp_path / "out"),
        "dataset": {"kind": "generator", "generator": "arithmetic"},
        "rewards": [{"name": "acc", "kind": "builtin", "builtin": "accuracy"}],
        "config": TrainingConfig(model=model).model_dump(), "ingest": {"url": url, "token": "t"},
    })


def reported_statuses(tmp_path) -> list[dict]:
    events = [json.loads(line) for line in (tmp_path / "out" / "events" / "events-supervisor-1.jsonl").open()]
    return [event for event in events if event["type"] == "status"]


def test_a_run_whose_model_is_missing_on_the_worker_fails_naming_the_model_before_anything_starts(
        tmp_path, monkeypatch, control_plane):
    monkeypatch.setenv("MODEL_DIRS", str(tmp_path))
    missing = str(tmp_path / "not-on-this-worker")
    supervisor = RunSupervisor(launch_spec(tmp_path, control_plane.url, missing), SETTINGS)
    assert supervisor.run() == "failed"
    assert supervisor.servers.here is None and supervisor.trainer.process is None
    last = reported_statuses(tmp_path)[-1]
    assert last["status"] == "failed" and last["message"] == (
        f"the run's config cannot train on this worker: config.model: model directory '{missing}' does not exist "
        "on this machine")


def test_a_run_whose_model_here_is_of_an_unknown_family_fails_naming_the_family(tmp_path, monkeypatch,
                                                                                 control_plane):
    monkeypatch.setenv("MODEL_DIRS", str(tmp_path))
    (tmp_path / "mamba").mkdir()
    (tmp_path / "mamba" / "config.json").write_text(json.dumps({"model_type": "falcon_mamba"}))
    supervisor = RunSupervisor(launch_spec(tmp_path, control_plane.url, str(tmp_path / "mamba")), SETTINGS)
    assert supervisor.run() == "failed"
    assert supervisor.servers.here is None
    assert "config.model: model family 'falcon_mamba' is not supported" in reported_statuses(tmp_path)[-1]["message"]
