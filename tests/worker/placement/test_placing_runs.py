"""Runs placed on a real Ray cluster of two nodes on this machine (tests/support/ray_cluster.py):
node-a, the head, has no CPU to give, so every run lands on node-b (1 CPU, 1 declared GPU).

The run is driven as the Celery task drives it: the driver in a child process
(worker/placement/child.py), a RunSupervisor stand-in in the actor. What the run was told
is read from the placement's own events on disk."""
import json
import re
import threading
import time
from pathlib import Path

import pytest

from tests.support.ray_cluster import TWO_NODES, start_ray_cluster
from tests.support.stub_control_plane import StubControlPlane
from worker.placement.child import run_placed
from worker.placement.cluster_door import open_cluster_message
from worker.settings import WorkerSettings
from worker.trainer.config import TrainingConfig

pytest.importorskip("ray")
STAND_INS = "tests.worker.placement.stand_ins"


@pytest.fixture
def control_plane():
    stub = StubControlPlane()
    stub.status = "queued"
    yield stub
    stub.close()


def launch(tmp_path, control_plane, **config) -> dict:
    return {"run_id": 7, "attempt": 1, "model": "m", "output_dir": str(tmp_path / "out"),
            "dataset": {"kind": "generator", "generator": "arithmetic"},
            "rewards": [{"name": "acc", "kind": "builtin", "builtin": "accuracy"}],
            "config": TrainingConfig(**config).model_dump(), "ingest": {"url": control_plane.url, "token": "t"}}


def settings(cluster, place_timeout_s=60.0, allow_open_cluster=False) -> WorkerSettings:
    return WorkerSettings(vllm_gpus="3", trainer_gpus=None, cancel_grace_s=5, log_lines_per_s=100,
                          gpus=("7",), ray_address=cluster.address, ray_place_timeout_s=place_timeout_s,
                          ray_allow_open_cluster=allow_open_cluster)


def placement_statuses(tmp_path) -> list[dict]:
    path = tmp_path / "out" / "events" / "events-placement-1.jsonl"
    events = [json.loads(line) for line in path.read_text().splitlines()]
    return [event for event in events if event["type"] == "status"]


def test_a_placed_run_runs_on_its_machine_with_the_gpus_ray_gave_it(tmp_path, cluster, control_plane):
    outcome = run_placed(launch(tmp_path, control_plane), settings(cluster), f"{STAND_INS}:FinishingSupervisor")
    assert outcome == "finished"
    arrived = json.loads((tmp_path / "out" / "arrived.json").read_text())
    # node-b's one GPU, not the Celery machine's "7"; no Ray inside the run; the worker's other settings kept
    assert arrived["gpus"] == ["0"] and arrived["ray_address"] is None and arrived["cancel_grace_s"] == 5
    assert arrived["omp_num_threads"] is None  # Ray's cap of one thread per actor CPU is not the run's
    assert placement_statuses(tmp_path) == []  # the run's own supervisor says how it went


def test_a_run_the_cluster_cannot_hold_fails_naming_what_each_machine_has_free(tmp_path, cluster, control_plane):
    config = {"trainer_processes": 2, "gradient_accumulation_steps": 2}  # 3 GPUs on one machine
    outcome = run_placed(launch(tmp_path, control_plane, **config), settings(cluster, place_timeout_s=2),
                         f"{STAND_INS}:FinishingSupervisor")
    assert outcome == "failed"
    [status] = placement_statuses(tmp_path)
    assert status["status"] == "failed"
    assert status["message"].startswith("run 7 needs 1 machine with 3 GPUs and 1 CPU; none was free after 2 s")
    assert f"The cluster at {cluster.address} has: node-a 0 GPUs 0 CPUs free, node-b 1 GPU 1 CPU free" \
        in status["message"]
    assert not (tmp_path / "out" / "arrived.json").exists()


def test_a_run_waiting_for_a_machine_says_so_and_a_cancel_stops_the_wait(tmp_path, cluster, control_plane):
    config = {"trainer_processes": 2, "gradient_accumulation_steps": 2}  # room never comes
    threading.Thread(target=_cancel_once_waiting, args=(control_plane, tmp_path), daemon=True).start()
    outcome = run_placed(launch(tmp_path, control_plane, **config), settings(cluster, place_timeout_s=300),
                         f"{STAND_INS}:FinishingSupervisor")
    assert outcome == "cancelled"
    assert [status["status"] for status in placement_statuses(tmp_path)] == ["cancelled"]
    [note] = [line for line in placement_logs(tmp_path) if "is waiting for" in line]
    assert note.startswith(f"run 7 is waiting for 1 machine with 3 GPUs and 1 CPU in the Ray cluster at "
                           f"{cluster.address}: none is free yet (node-a 0 GPUs 0 CPUs free, node-b 1 GPU 1 CPU free)")
    assert "of 300 s (WORKER_RAY_PLACE_TIMEOUT_S), cancel to stop waiting" in note


def test_nothing_of_a_run_is_sent_to_a_cluster_that_lets_anyone_in(tmp_path, joining_the_open_cluster,
                                                                    control_plane):
    open_cluster = joining_the_open_cluster
    outcome = run_placed(launch(tmp_path, control_plane), settings(open_cluster), f"{STAND_INS}:FinishingSupervisor")
    assert outcome == "failed"
    [status] = placement_statuses(tmp_path)
    assert status["message"] == open_cluster_message(open_cluster.address)
    assert "RAY_AUTH_MODE=token" in status["message"] and "WORKER_RAY_ALLOW_OPEN_CLUSTER=1" in status["message"]
    assert not (tmp_path / "out" / "arrived.json").exists()


def test_a_worker_told_the_open_cluster_is_meant_places_its_runs_there(tmp_path, joining_the_open_cluster,
                                                                        control_plane):
    open_cluster = joining_the_open_cluster
    outcome = run_placed(launch(tmp_path, control_plane), settings(open_cluster, allow_open_cluster=True),
                         f"{STAND_INS}:FinishingSupervisor")
    assert outcome == "finished" and (tmp_path / "out" / "arrived.json").exists()


def test_a_redelivered_run_is_not_placed(tmp_path, cluster, control_plane):
    control_plane.status = "running"
    outcome = run_placed(launch(tmp_path, control_plane), settings(cluster), f"{STAND_INS}:FinishingSupervisor")
    assert outcome == "skipped" and not (tmp_path / "out" / "arrived.json").exists()


def test_a_run_whose_machine_is_lost_fails_naming_the_machine(tmp_path, control_plane):
    cluster = start_ray_cluster(TWO_NODES)  # its own: node-b is lost
    try:
        result = {}
        driver = threading.Thread(target=lambda: result.update(outcome=run_placed(
            launch(tmp_path, control_plane), settings(cluster), f"{STAND_INS}:HangingSupervisor")))
        driver.start()
        _wait_for(tmp_path / "out" / "arrived.json", driver)
        node_b = cluster.node("node-b")
        node_b.kill(node_b.raylet_tree())  # the machine gone: its raylet and every process it started
        driver.join(timeout=120)
        assert result.get("outcome") == "failed"
        [status] = placement_statuses(tmp_path)
        assert status["status"] == "failed"
        assert re.fullmatch(r"machine node-b \([0-9.]+, Ray node [0-9a-f]{8}\) was lost mid-run", status["message"])
    finally:
        cluster.stop()


def placement_logs(tmp_path) -> list[str]:
    path = tmp_path / "out" / "events" / "events-placement-1.jsonl"
    if not path.exists():
        return []
    events = [json.loads(line) for line in path.read_text().splitlines() if line.endswith("}")]
    return [event["message"] for event in events if event["type"] == "log"]


def _cancel_once_waiting(control_plane: StubControlPlane, tmp_path: Path) -> None:
    """Cancels once the driver has said the run is waiting (so after its first reply, the run
    found queued: a run cancelled before that is not placed at all)."""
    deadline = time.monotonic() + 120
    while not any("is waiting for" in line for line in placement_logs(tmp_path)) and time.monotonic() < deadline:
        time.sleep(0.1)
    control_plane.cancel = True


def _wait_for(path: Path, driver: threading.Thread, timeout_s: float = 120) -> None:
    deadline = time.monotonic() + timeout_s
    while not path.exists():
        assert driver.is_alive(), "the driver ended before the run reached its machine"
        assert time.monotonic() < deadline, f"the run never reached its machine ({path} not written)"
        time.sleep(0.2)
