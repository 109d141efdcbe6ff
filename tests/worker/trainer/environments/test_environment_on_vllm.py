"""Multi-turn rollouts on real parts: a real vLLM serving a tiny model, the real control plane.

A run on the calculator environment trains on episodes: each sample is a conversation whose
assistant turns were trained and whose environment turns were not, the episode metrics arrive
with every step, and its evaluations play episodes too.
"""
import re

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
                                 generator_params={"count": 32, "difficulty": 2, "seed": 0}, row_count=32,
                                 columns=["prompt", "answer"])
accuracy = RewardFunction.objects.create(owner=owner, name="accuracy", kind="builtin", builtin="accuracy")
config = TrainingConfig(model=MODEL, num_generations=4, per_device_train_batch_size=8, max_steps=3,
                        max_prompt_length=256, max_completion_length=8, learning_rate=5e-3, save_steps=3,
                        max_staleness=1, max_inflight_tasks=8, temperature=1.0, seed=1, max_turns=3,
                        max_episode_tokens=20, max_tool_calls=2, eval_steps=3, eval_holdout_fraction=0.25,
                        eval_examples=4).model_dump()
run = Run.objects.create(owner=owner, name="tools", dataset=dataset, config=config)
RunReward.objects.create(run=run, reward_function=accuracy, weight=1.0)
run.enqueue()
token = run.issue_ingest_token()
run.save()
spec = build_launch_spec(run, token)
spec["environment"] = {"name": "calculator", "kind": "builtin", "builtin": "calculator",
                       "params": {"cost_per_call": 0.1}}
print(json.dumps(spec))
"""


@pytest.mark.slow
def test_a_run_on_the_calculator_environment_trains_on_episodes(tiny_model_dir, tmp_path):
    from worker.trainer.app import run_trainer
    from worker.trainer.config import TrainingConfig
    from worker.trainer.inference.server import VLLMServer

    (tmp_path / "cp").mkdir()
    config = TrainingConfig(max_prompt_length=256, max_completion_length=8)
    with AsgiServer(tmp_path / "cp") as control_plane, \
            VLLMServer.for_config(str(tiny_model_dir), config, log_path=tmp_path / "vllm.log") as vllm:
        vllm.wait_until_healthy()
        spec = control_plane.shell_json(f"MODEL = {str(tiny_model_dir)!r}\n" + SEED)
        assert run_trainer({**spec, "inference_url": vllm.url}) == "succeeded"
        owner = logged_in_client(control_plane, "owner", "owner-pass-123")
        run_id = spec["run_id"]
        metrics = owner.get(f"/api/runs/{run_id}/metrics/").json()
        samples = owner.get(f"/api/runs/{run_id}/samples/", params={"page_size": 100}).json()["results"]
        logs = owner.get(f"/api/runs/{run_id}/logs/", params={"page_size": 1000}).json()["results"]
        served = httpx.get(f"{vllm.url}/metrics", timeout=30).text
    assert {"episode/turns_mean", "episode/tool_calls_mean", "episode/tool_error_rate", "episode/tokens_mean",
            "episode/end/done", "episode/end/max_tokens", "rollout/reward/tool_cost_mean"} <= set(metrics["names"])
    assert metrics["series"]["episode/turns_mean"]["step"] == [1, 2, 3]
    assert metrics["series"]["eval/pass@1"]["step"] == [0, 3]  # evaluated on episodes too
    episode = samples[0]
    assert episode["turns"][0]["role"] == "system" and episode["end_reason"]
    assistant = [t for t in episode["turns"] if t["trained"]]
    assert assistant and all(t["role"] == "assistant" and t["model_version"] is not None for t in assistant)
    assert not any(t["trained"] for t in episode["turns"] if t["role"] != "assistant")
    assert sum(t["num_tokens"] for t in assistant) <= 20  # max_episode_tokens
    # Each turn's request starts with the one before's context: the server's prefix cache finds it.
    hits = [float(value) for value in re.findall(r"^vllm:prefix_cache_hits_total\{[^}]*\} ([\d.e+]+)$", served,
                                                  re.MULTILINE)]
    assert hits and sum(hits) > 0, hits
    messages = [line["message"] for line in logs]
    assert any("environment 'calculator' (calculator): tools calculate, tool calls in the text format" in m
               for m in messages), messages
