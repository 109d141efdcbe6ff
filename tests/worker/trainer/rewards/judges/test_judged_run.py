"""Runs judged by models, on real parts: a real vLLM serving the tiny policy behind its API key,
a served judge on a second real vLLM (the default model), an endpoint judge at the policy's own
server with the key the control plane gives, and files as the control plane (events in JSONL).

A judged run reports each judge's calls and latency per step, and its samples carry the judge's
answers beside the rewards; an endpoint judge whose key is refused fails the run at start with
the endpoint's message, and the key is never written anywhere.
"""
import json

import pytest

from tests.support.secrets_view import SecretsView

# Two vLLM servers start on this machine's cores (the policy's, then the judge's beside the trainer).
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

HAS_NUMBER = {"template": "Question: {prompt}\nAnswer: {completion}\n\nDoes the answer contain a number? "
                          "Reply yes or no.", "mode": "choice", "labels": {"yes": 1.0, "no": 0.0},
              "max_answer_tokens": 4, "pass_threshold": 0.5}


def config():
    from worker.trainer.config import TrainingConfig

    return TrainingConfig(num_generations=4, per_device_train_batch_size=8, max_steps=2, max_prompt_length=64,
                          max_completion_length=8, learning_rate=5e-3, save_steps=2, max_staleness=1,
                          max_inflight_tasks=8, temperature=1.0, seed=1, samples_groups_per_step=2)


@pytest.fixture(scope="module")
def policy_server(tiny_model_dir, tmp_path_factory):
    """The tiny policy, served behind its key, for every run of this module."""
    from worker.trainer.inference.launch import new_api_key
    from worker.trainer.inference.server import VLLMServer

    log = tmp_path_factory.mktemp("policy") / "vllm.log"
    with VLLMServer.for_config(str(tiny_model_dir), config(), log_path=log, api_key=new_api_key()) as server:
        server.wait_until_healthy()
        yield server


def launch_spec(tmp_path, tiny_model_dir, server, rewards, secrets_url=None) -> dict:
    return {"run_id": 1, "model": str(tiny_model_dir), "output_dir": str(tmp_path / "out"),
            "config": config().model_dump(), "secrets_url": secrets_url,
            "dataset": {"kind": "generator", "generator": "arithmetic",
                        "params": {"count": 32, "difficulty": 1, "seed": 0}},
            "rewards": rewards, "inference_url": server.url, "inference_api_key": server.api_key}


def at_the_policy_server(server) -> dict:
    """An endpoint judge whose endpoint is the policy's own server (its key asked of every request);
    at 127.0.0.1, so its spec says the operator listed the host."""
    return {**HAS_NUMBER, "endpoint": "url", "base_url": f"{server.url}/v1", "model": server.served_model_name,
            "max_answer_tokens": 16}


def events_of(tmp_path) -> tuple[list[dict], str]:
    text = (tmp_path / "out" / "events" / "events-trainer-1.jsonl").read_text()
    return [json.loads(line) for line in text.splitlines()], text


def test_a_run_judged_by_a_served_and_an_endpoint_judge_reports_them_and_shows_their_answers(
        tiny_model_dir, smollm2_dir, policy_server, tmp_path):
    from worker.trainer.app import run_trainer

    rewards = [
        {"name": "acc", "kind": "builtin", "builtin": "accuracy", "verifier": True},
        {"name": "has_number", "kind": "judge", "params": {**HAS_NUMBER, "model": str(smollm2_dir)}},
        {"name": "policy_says", "kind": "judge", "params": at_the_policy_server(policy_server), "has_api_key": True,
         "weight": 0.0, "internal_host_allowed": True},
    ]
    with SecretsView({"policy_says": policy_server.api_key}) as secrets:
        outcome = run_trainer(launch_spec(tmp_path, tiny_model_dir, policy_server, rewards, secrets.url))
    events, text = events_of(tmp_path)
    assert outcome == "succeeded", [e for e in events if e["type"] in ("status", "log")][-5:]
    metrics = {e["step"]: e["values"] for e in events if e["type"] == "metrics"}
    assert sorted(metrics) == [0, 1, 2]
    judged = [metrics[1], metrics[2]]
    # Each step's groups were judged by both: counted, timed, and measured against the verifier.
    assert sum(m["judge/has_number/calls"] for m in judged) >= 16
    assert sum(m["judge/policy_says/calls"] for m in judged) >= 16
    assert all(m["judge/has_number/latency_s_mean"] > 0 for m in judged if m["judge/has_number/calls"])
    assert all(0 <= m["judge/has_number/disagreement"] <= 1 for m in judged)
    assert {"rollout/reward/has_number_mean", "rollout/reward/policy_says_mean"} <= set(metrics[2])
    # The completion browser's samples: each judge's raw answer beside the reward parsed from it.
    samples = [s for e in events if e["type"] == "samples" for s in e["samples"]]
    assert samples and all(set(s["judgements"]) == {"has_number", "policy_says"} for s in samples)
    answered = [s for s in samples if s["judgements"]["has_number"] is not None]
    assert answered, samples[0]
    for sample in answered:
        label = sample["judgements"]["has_number"].strip().lower()
        assert sample["rewards"]["has_number"] == HAS_NUMBER["labels"].get(label), sample
    logs = [e["message"] for e in events if e["type"] == "log"]
    assert any("API keys fetched for reward(s) 'policy_says'" in m for m in logs)
    assert any("judge endpoint(s) answered: 'policy_says'" in m for m in logs)
    assert policy_server.api_key not in text  # the key: used, never written


def test_an_endpoint_refusing_the_judges_key_fails_the_run_at_start_with_its_message(
        tiny_model_dir, policy_server, tmp_path):
    from worker.trainer.app import run_trainer

    rewards = [{"name": "acc", "kind": "builtin", "builtin": "accuracy"},
               {"name": "policy_says", "kind": "judge", "params": at_the_policy_server(policy_server),
                "has_api_key": True, "internal_host_allowed": True}]
    with SecretsView({"policy_says": "sk-wrong-key-for-this-server"}) as secrets:
        outcome = run_trainer(launch_spec(tmp_path, tiny_model_dir, policy_server, rewards, secrets.url))
    events, text = events_of(tmp_path)
    assert outcome == "failed"
    [failed] = [e for e in events if e["type"] == "status" and e["status"] == "failed"]
    assert "judge 'policy_says'" in failed["message"] and "refused the API key" in failed["message"]
    assert "401" in failed["message"], failed["message"]
    assert not [e for e in events if e["type"] == "metrics" and e["step"] > 0]  # no step was trained
    assert "sk-wrong-key-for-this-server" not in text
