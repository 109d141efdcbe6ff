"""A run started through the REST API trains to the end on a pool that is a Ray cluster: a real
Celery worker with WORKER_RAY_ADDRESS, a one-node cluster (node-a) started with the control
plane's environment, and the tiny model. The whole run (vLLM, trainer) lives in a Ray actor."""
import time

import pytest

from tests.support.asgi_server import AsgiServer, logged_in_client
from tests.support.celery_worker import start_worker, stop_worker
from tests.support.processes import processes_mentioning
from tests.support.ray_cluster import start_ray_cluster
from tests.support.seeds import SEED_E2E_RUN

pytestmark = pytest.mark.slow
pytest.importorskip("ray")


def wait_for_end(owner, run_id: int, timeout_s: float = 600) -> dict:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        run = owner.get(f"/api/runs/{run_id}/").json()
        if run["status"] in ("succeeded", "failed", "cancelled", "lost"):
            return run
        time.sleep(1)
    raise AssertionError(f"run {run_id} still {run['status']} after {timeout_s} s")


def test_a_run_on_a_ray_pool_trains_to_the_end_on_its_machine(tiny_model_dir, tmp_path):
    (tmp_path / "cp").mkdir()
    with AsgiServer(tmp_path / "cp") as server:
        cluster = start_ray_cluster(((2, 0),), env=server.env)  # the machine's environment: MODEL_DIRS, DATA_DIR
        try:
            seed = SEED_E2E_RUN.replace("max_steps=3", "max_steps=2")
            run_id = server.shell_json(f"MODEL = {str(tiny_model_dir)!r}\n" + seed)["run_id"]
            owner = logged_in_client(server, "owner", "owner-pass-123")
            response = owner.post(f"/api/runs/{run_id}/start/", headers={"X-CSRFToken": owner.cookies["csrftoken"]})
            assert response.status_code == 200, response.text
            worker = start_worker(server, "default", env={**server.env, "WORKER_RAY_ADDRESS": cluster.address})
            try:
                run = wait_for_end(owner, run_id)
            finally:
                stop_worker(worker)
            steps = owner.get(f"/api/runs/{run_id}/metrics/", params={"names": "train/loss"}).json()
            logs = owner.get(f"/api/runs/{run_id}/logs/", params={"page_size": 1000}).json()["results"]
        finally:
            cluster.stop()
    assert run["status"] == "succeeded", run["error_message"]
    assert steps["series"]["train/loss"]["step"] == [1, 2]
    assert any(line["message"].startswith("placed on machine node-a (") for line in logs)
    assert any("vLLM answered /health" in line["message"] for line in logs)
    assert processes_mentioning(str(tiny_model_dir)) == []
