"""execute_run on a worker whose pool is a Ray cluster hands the run to the placement driver;
a bad spec is still refused before anything is placed."""
import pytest

from worker import tasks
from worker.placement import child
from worker.trainer.config import TrainingConfig


def spec(tmp_path) -> dict:
    return {"run_id": 7, "attempt": 1, "model": "m", "output_dir": str(tmp_path / "out"),
            "dataset": {"kind": "generator", "generator": "arithmetic"},
            "rewards": [{"name": "acc", "kind": "builtin", "builtin": "accuracy"}],
            "config": TrainingConfig().model_dump(), "ingest": {"url": "http://cp/api/runs/7/events/", "token": "t"}}


@pytest.fixture
def placed(monkeypatch):
    calls = []
    monkeypatch.setattr(child, "run_placed", lambda launch, settings: calls.append((launch, settings)) or "finished")
    monkeypatch.setenv("WORKER_RAY_ADDRESS", "10.0.0.5:6379")
    monkeypatch.setenv("WORKER_RAY_PLACE_TIMEOUT_S", "42")
    return calls


def test_a_ray_pools_run_is_placed_on_the_cluster(tmp_path, placed):
    assert tasks.execute_run.run(7, spec(tmp_path)) == "finished"
    [(launch, settings)] = placed
    assert launch["run_id"] == 7 and settings.ray_address == "10.0.0.5:6379" and settings.ray_place_timeout_s == 42


def test_an_invalid_spec_is_refused_before_anything_is_placed(placed):
    assert tasks.execute_run.run(7, {"run_id": 7}) == "invalid-spec"
    assert placed == []


def test_a_placement_order_needs_a_ray_address(tmp_path):
    from worker.placement.order import PlacementOrder
    from worker.settings import WorkerSettings

    settings = WorkerSettings(vllm_gpus=None, trainer_gpus=None, cancel_grace_s=5, log_lines_per_s=100)
    with pytest.raises(ValueError, match="WORKER_RAY_ADDRESS"):
        PlacementOrder.for_run(spec(tmp_path), settings, tmp_path / "outcome")
