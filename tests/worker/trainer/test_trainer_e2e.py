"""The trainer end to end on real parts: a real vLLM serving a tiny model, the real control plane.

Train, cancel mid-run from the API (a checkpoint is saved), resume from that
checkpoint through the control plane's launch spec, and check that steps
continue without repeats and that the weights vLLM serves changed.
"""
import os
import threading
import time
from pathlib import Path

import httpx
import pytest

from tests.support.asgi_server import AsgiServer, logged_in_client

SEED = """
import json
from django.contrib.auth import get_user_model
from runs.models import Dataset, RewardFunction, Run, RunReward
from runs.training_runs.launch import build_launch_spec
from worker.trainer.config import TrainingConfig
owner = get_user_model().objects.create_user("owner", password="owner-pass-123")
dataset = Dataset.objects.create(owner=owner, name="arith", source="generator", generator="arithmetic",
                                 generator_params={"count": 64, "difficulty": 1, "seed": 0}, row_count=64)
# A random tiny model never answers or stops early; about half its completions start with a
# space, so this format reward gives groups a reward spread and the policy a gradient.
fmt = RewardFunction.objects.create(owner=owner, name="format", kind="builtin", builtin="format",
                                    params={"regex": "(?s) .*"})
length = RewardFunction.objects.create(owner=owner, name="length", kind="builtin", builtin="length",
                                       params={"max_tokens": 4, "soft_penalty_tokens": 8})
# Enough steps for a cancel to arrive before the end: the heartbeat that carries it comes every 5 s.
config = TrainingConfig(model=MODEL, num_generations=4, per_device_train_batch_size=8, max_steps=24,
                        max_prompt_length=64, max_completion_length=12, learning_rate=5e-3, save_steps=2,
                        max_staleness=1, max_inflight_tasks=8, temperature=1.0, seed=1, **KNOBS).model_dump()
run = Run.objects.create(owner=owner, name="e2e", dataset=dataset, config=config)
RunReward.objects.create(run=run, reward_function=fmt, weight=1.0)
RunReward.objects.create(run=run, reward_function=length, weight=1.0)
run.enqueue()
token = run.issue_ingest_token()
run.save()
print(json.dumps(build_launch_spec(run, token)))
"""

RESUME = """
import json
from runs.models import Run
from runs.training_runs.launch import build_launch_spec
run = Run.objects.get(pk=RUN_ID)
checkpoint = run.checkpoints.order_by("-step").first()
run.enqueue()
token = run.issue_ingest_token()
run.save()
print(json.dumps(build_launch_spec(run, token, resume_from=checkpoint)))
"""

PROBE = "What is 2 + 3? Answer:"


def probe_logprobs(server_url: str, model_name: str) -> list[float]:
    """Log-probs the server assigns to a fixed text: they move when the served weights do."""
    response = httpx.post(f"{server_url}/v1/completions", timeout=60, json={
        "model": model_name, "prompt": PROBE, "max_tokens": 1, "prompt_logprobs": 0, "temperature": 0})
    response.raise_for_status()
    entries = response.json()["choices"][0]["prompt_logprobs"][1:]
    return [next(iter(entry.values()))["logprob"] for entry in entries]


def cancel_when_step_reached(owner: httpx.Client, run_id: int, step: int) -> threading.Thread:
    def watch():
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            if owner.get(f"/api/runs/{run_id}/").json()["current_step"] >= step:
                owner.post(f"/api/runs/{run_id}/cancel/", headers={"X-CSRFToken": owner.cookies["csrftoken"]})
                return
            time.sleep(0.3)

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


# LoRA with a KL term: the adapter trains, the reference is the base with the adapter off, vLLM
# gets the adapter alone ("lora") or, as by default on a CPU, the merged weights ("lora-merged"),
# a resumed run starts the server from the base model, and the last checkpoint holds the merged model.
LORA = {"lora": True, "lora_r": 8, "lora_alpha": 16.0, "beta": 0.04}
VARIANTS = {"full": {}, "lora": {**LORA, "lora_serving": "adapter"}, "lora-merged": LORA}


@pytest.mark.slow
@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_train_cancel_resume_on_a_real_vllm(tiny_model_dir, tmp_path, variant):
    from worker.trainer.app import run_trainer
    from worker.trainer.config import TrainingConfig
    from worker.trainer.inference.server import VLLMServer, group_members

    config = TrainingConfig(max_prompt_length=64, max_completion_length=12, **VARIANTS[variant])
    cpus = sorted(os.sched_getaffinity(0))
    (tmp_path / "cp").mkdir()
    with AsgiServer(tmp_path / "cp") as control_plane, \
            VLLMServer.for_config(str(tiny_model_dir), config, log_path=tmp_path / "vllm.log") as vllm:
        vllm.wait_until_healthy()
        if len(cpus) >= 2:  # the default splits the cores: every server process keeps to the last
            assert {tuple(sorted(os.sched_getaffinity(pid))) for pid in group_members(vllm.pid)} == {(cpus[-1],)}
        spec = control_plane.shell_json(f"MODEL = {str(tiny_model_dir)!r}\nKNOBS = {VARIANTS[variant]!r}\n" + SEED)
        run_id = spec["run_id"]
        owner = logged_in_client(control_plane, "owner", "owner-pass-123")
        before = probe_logprobs(vllm.url, vllm.served_model_name)

        watcher = cancel_when_step_reached(owner, run_id, step=2)
        assert run_trainer({**spec, "inference_url": vllm.url}) == "cancelled"
        watcher.join(timeout=5)
        run = owner.get(f"/api/runs/{run_id}/").json()
        assert run["status"] == "cancelled"
        stopped_at = run["current_step"]
        assert 2 <= stopped_at < 24
        served = "policy-lora" if variant == "lora" else vllm.served_model_name  # LoRA: the adapter
        after = probe_logprobs(vllm.url, served)
        assert after != pytest.approx(before, abs=1e-4)  # the weight syncs reached the server

        resumed = control_plane.shell_json(f"RUN_ID = {run_id}\n" + RESUME)
        assert resumed["resume_from"].endswith(f"step-{stopped_at:07d}")
        saved = {path.name for path in Path(resumed["resume_from"]).iterdir()}
        assert ("adapter_model.safetensors" in saved) == (variant != "full")
        assert run_trainer({**resumed, "inference_url": vllm.url}) == "succeeded"

        run = owner.get(f"/api/runs/{run_id}/").json()
        metrics = owner.get(f"/api/runs/{run_id}/metrics/", params={"names": "train/loss"}).json()
        checkpoints = owner.get(f"/api/runs/{run_id}/checkpoints/").json()
        samples = owner.get(f"/api/runs/{run_id}/samples/").json()
        staleness = owner.get(f"/api/runs/{run_id}/metrics/", params={"names": "async/staleness_max"}).json()
        logs = owner.get(f"/api/runs/{run_id}/logs/", params={"page_size": 1000}).json()
    assert run["status"] == "succeeded" and run["current_step"] == 24
    messages = [line["message"] for line in logs["results"]]
    if variant == "lora":  # the adapter went alone, both before and after the resume
        assert sum("takes the LoRA adapter alone" in message for message in messages) == 2, messages
    else:  # the model, or the merged weights, reloaded directly (the server has no adapters)
        assert any("by the direct reload" in message for message in messages), messages
    assert (Path(checkpoints[-1]["path"]) / "merged").is_dir() == (variant != "full")
    assert metrics["series"]["train/loss"]["step"] == list(range(1, 25))  # none twice, none skipped
    assert [c["step"] for c in checkpoints][-1] == 24
    assert samples["count"] > 0 and samples["results"][0]["rewards"].keys() == {"format", "length"}
    assert {"rollout/reward_mean", "train/grad_norm", "system/weight_sync_s",
            "async/staleness_max"} <= set(metrics["names"])
    # Each sync's parts too, the server's reload as it timed it: what a slow sync is located by.
    server_part = "server_load" if variant == "lora" else "server_reload"  # the adapter's load, the model's reload
    assert {"system/weight_sync_write_s", f"system/weight_sync_{server_part}_s"} <= set(metrics["names"])
    if len(cpus) >= 2:  # how much of each step trained beside generation, on fewer cores
        assert "system/train_seconds_beside_generation" in metrics["names"]
    # Reported as the drop rule saw it: never above the bound (nothing staler is trained).
    assert max(staleness["series"]["async/staleness_max"]["value"]) <= 1  # the seed's max_staleness
    # Start-up timings arrive before the first step: where the wait before training went.
    assert {"setup/process_s", "setup/load_s", "setup/inference_wait_s", "setup/setup_s"} <= set(metrics["names"])
