"""A run started through the REST API trains to the end on real parts: a Celery worker
process, a vLLM server on a tiny model, the trainer, and a websocket watching it live."""
import asyncio
import json
import os
from pathlib import Path

import pytest
import websockets

from tests.support.asgi_server import AsgiServer, logged_in_client
from tests.worker.test_queueing import start_worker, stop_worker

SEED = """
import json
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token
from runs.models import Dataset, RewardFunction, Run, RunReward
from worker.trainer.config import TrainingConfig
owner = get_user_model().objects.create_user("owner", password="owner-pass-123")
dataset = Dataset.objects.create(owner=owner, name="arith", source="generator", generator="arithmetic",
                                 generator_params={"count": 64, "difficulty": 1, "seed": 0}, row_count=64)
fmt = RewardFunction.objects.create(owner=owner, name="format", kind="builtin", builtin="format",
                                    params={"regex": "(?s) .*"})
config = TrainingConfig(model=MODEL, num_generations=4, per_device_train_batch_size=8, max_steps=3,
                        max_prompt_length=64, max_completion_length=12, learning_rate=5e-3, save_steps=2,
                        max_inflight_tasks=8).model_dump()
run = Run.objects.create(owner=owner, name="e2e", dataset=dataset, config=config)
RunReward.objects.create(run=run, reward_function=fmt, weight=1.0)
print(json.dumps({"run_id": run.pk, "api_token": Token.objects.create(user=owner).key}))
"""


def processes_mentioning(text: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if text in (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"):
                    found.append(int(entry.name))
            except OSError:
                continue
    return [pid for pid in found if pid != os.getpid()]


def vllm_engine_processes(data_dir) -> set[int]:
    """vLLM's engine core and workers started for the control plane at `data_dir`. They rename
    themselves (VLLM::EngineCore), so their command lines name no model; left behind, they are
    reparented to init. Their environment still names the control plane's folder (setproctitle
    blanks its first entries, DATA_DIR among them, but DATABASE_URL survives), which tells them
    apart from other vLLM servers on the machine."""
    wanted = str(data_dir).encode()
    found = set()
    for pid in processes_mentioning("VLLM::"):
        try:
            if (Path(f"/proc/{pid}/cmdline").read_bytes().startswith(b"VLLM::")
                    and wanted in Path(f"/proc/{pid}/environ").read_bytes()):
                found.add(pid)
        except OSError:
            continue  # gone meanwhile
    return found


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
        seed = server.shell_json(f"MODEL = {str(tiny_model_dir)!r}\n" + SEED)
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
    # vLLM (its command names the model) and the trainer (it names the run's folder) are gone.
    assert processes_mentioning(str(tiny_model_dir)) == processes_mentioning(str(tmp_path / "cp" / "runs")) == []
    assert vllm_engine_processes(tmp_path / "cp") == set()
