"""A run started through the REST API trains to the end on real parts: a Celery worker
process, a vLLM server on a tiny model, the trainer, and a websocket watching it live."""
import asyncio
import json

import pytest
import websockets

from tests.support.asgi_server import AsgiServer, logged_in_client
from tests.support.celery_worker import start_worker, stop_worker
from tests.support.processes import processes_mentioning, vllm_engine_processes
from tests.support.seeds import SEED_E2E_RUN

async def watch_until_finished(url: str, headers: dict, timeout_s: float) -> list[dict]:
    messages = []
    async with websockets.connect(url, additional_headers=headers) as socket:
        async def collect():
            while True:
                message = json.loads(await socket.recv())
                messages.append(message)
                if message["type"] == "run.status" and message["payload"]["status"] in ("succeeded", "failed"):
                    return
        await asyncio.wait_for(collect(), timeout_s)
    return messages


@pytest.mark.slow
async def test_run_started_in_the_api_trains_to_the_end(tiny_model_dir, tmp_path):
    (tmp_path / "cp").mkdir()
    with AsgiServer(tmp_path / "cp") as server:
        seed = server.shell_json(f"MODEL = {str(tiny_model_dir)!r}\n" + SEED_E2E_RUN)
        run_id = seed["run_id"]
        owner = logged_in_client(server, "owner", "owner-pass-123")
        cookie = "; ".join(f"{k}={v}" for k, v in owner.cookies.items())
        headers = {"Cookie": cookie, "Origin": "http://127.0.0.1"}
        watcher = asyncio.create_task(watch_until_finished(
            server.url.replace("http", "ws") + f"/ws/runs/{run_id}/", headers, timeout_s=600))
        await asyncio.sleep(0.5)
        response = await asyncio.to_thread(owner.post, f"/api/runs/{run_id}/start/",
                                           headers={"X-CSRFToken": owner.cookies["csrftoken"]})
        assert response.status_code == 200, response.text
        worker = start_worker(server, "default")
        try:
            messages = await watcher
        finally:
            await asyncio.to_thread(stop_worker, worker)
        run = owner.get(f"/api/runs/{run_id}/").json()
        steps = owner.get(f"/api/runs/{run_id}/metrics/", params={"names": "train/loss"}).json()
        checkpoints = owner.get(f"/api/runs/{run_id}/checkpoints/").json()
        logs = owner.get(f"/api/runs/{run_id}/logs/", params={"page_size": 1000}).json()["results"]
    statuses = [m["payload"]["status"] for m in messages if m["type"] == "run.status"]
    assert run["status"] == "succeeded", run["error_message"]
    assert statuses[-1] == "succeeded" and "starting" in statuses and "running" in statuses
    assert any(m["type"] == "run.metrics" for m in messages) and any(m["type"] == "run.samples" for m in messages)
    assert steps["series"]["train/loss"]["step"] == [1, 2, 3]
    assert [c["step"] for c in checkpoints] == [2, 3]
    assert any("vLLM answered /health" in line["message"] for line in logs)
    # httpx's line per request (to vLLM, to the control plane) is not the run's log.
    assert not [line["message"] for line in logs if "HTTP Request:" in line["message"]]
    # vLLM (its command names the model) and the trainer (it names the run's folder) are gone.
    assert processes_mentioning(str(tiny_model_dir)) == processes_mentioning(str(tmp_path / "cp" / "runs")) == []
    assert vllm_engine_processes(tmp_path / "cp") == set()
