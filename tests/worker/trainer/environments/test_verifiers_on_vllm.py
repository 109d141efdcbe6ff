"""A run on a verifiers environment on real parts: a real vLLM serving a tiny model trains two
steps on vf-tiny (tests/support/verifiers_envs/), its rows, episodes and rubric all the
environment's, with no reward function of the library."""
import json
from pathlib import Path

import pytest

pytest.importorskip("verifiers")

ENVIRONMENTS = Path(__file__).resolve().parents[3] / "support" / "verifiers_envs"


def events(output_dir: Path) -> list[dict]:
    lines = (output_dir / "events" / "events-trainer-1.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


@pytest.mark.slow
def test_a_run_on_a_verifiers_environment_trains_on_its_episodes_scored_by_its_rubric(
        tiny_model_dir, tmp_path, monkeypatch):
    from worker.trainer.app import run_trainer
    from worker.trainer.config import TrainingConfig
    from worker.trainer.inference.server import VLLMServer

    monkeypatch.syspath_prepend(str(ENVIRONMENTS))
    config = TrainingConfig(model=str(tiny_model_dir), num_generations=4, per_device_train_batch_size=8, max_steps=2,
                            max_prompt_length=256, max_completion_length=4, learning_rate=5e-3, save_steps=2,
                            max_staleness=1, max_inflight_tasks=8, temperature=1.0, seed=1, max_turns=3,
                            max_episode_tokens=12)
    environment = {"kind": "verifiers", "verifiers_id": "vf-tiny", "params": {"size": 8, "max_turns": 3}}
    with VLLMServer.for_config(str(tiny_model_dir), config, log_path=tmp_path / "vllm.log") as vllm:
        vllm.wait_until_healthy()
        outcome = run_trainer({
            "run_id": 1, "model": str(tiny_model_dir), "output_dir": str(tmp_path / "out"),
            "dataset": {"kind": "environment", "verifiers_id": "vf-tiny", "params": environment["params"]},
            "rewards": [], "environment": {"name": "tiny", **environment},
            "config": config.model_dump(), "inference_url": vllm.url,
        })
    reported = events(tmp_path / "out")
    logs = [e["message"] for e in reported if e["type"] == "log"]
    assert outcome == "succeeded", logs
    names = {name for e in reported if e["type"] == "metrics" for name in e["values"]}
    assert {"rollout/reward/correct_mean", "rollout/reward/hints_mean", "rollout/reward/num_turns_mean",
            "episode/turns_mean", "train/loss"} <= names, sorted(names)
    assert any("environment 'tiny' (vf-tiny): tools none" in message for message in logs), logs
    episode = next(s for e in reported if e["type"] == "samples" for s in e["samples"])
    assert episode["turns"][0]["role"] == "system" and episode["turns"][0]["content"] == "You play a guessing game."
    assert {"correct", "hints", "solved_share", "num_turns"} <= set(episode["rewards"])
