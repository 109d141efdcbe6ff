"""A served judge on a real vLLM on the CPU with the default model: its server answers the judge's
questions with its own key, refuses requests without it, and is gone once stopped. One server,
about a minute to start."""
import httpx
import pytest

from worker.trainer.config import TrainingConfig
from worker.trainer.inference.api_key_guard import bearer
from worker.trainer.rewards.judges.catalog import JudgeParams
from worker.trainer.rewards.judges.judge import Judge
from worker.trainer.rewards.judges.served import ServedJudges
from worker.trainer.spec import RewardSpec

TEMPLATE = "Question: {prompt}\nAnswer: {completion}\nIs the answer correct? Reply yes or no."


def chat(endpoint, headers: dict) -> httpx.Response:
    return httpx.post(endpoint.base_url + "/chat/completions", headers=headers, timeout=120, json={
        "model": endpoint.model, "messages": [{"role": "user", "content": "What is 2 + 2?"}],
        "max_tokens": 8, "temperature": 0.0})


@pytest.mark.slow
def test_a_served_judge_answers_with_its_key_and_refuses_without(smollm2_dir, tmp_path):
    model = str(smollm2_dir)
    params = {"model": model, "template": TEMPLATE, "mode": "choice", "labels": {"yes": 1.0, "no": 0.0}}
    config = TrainingConfig(max_prompt_length=64, max_completion_length=32, vllm_kv_cache_gib=1)
    with ServedJudges([RewardSpec(name="correct", kind="judge", params=params)], config, tmp_path) as judges:
        endpoint = judges.endpoint(model)
        answered = chat(endpoint, bearer(endpoint.api_key))
        assert answered.status_code == 200, answered.text
        assert answered.json()["model"] == "judge" and answered.json()["choices"][0]["message"]["content"]
        for headers in ({}, bearer("not-its-key")):
            assert chat(endpoint, headers).status_code == 401
        with Judge("correct", JudgeParams(**params), endpoint) as judge:
            judge.check()
            rewards = judge(["What is 2 + 2?"] * 2, ["4", "5"])
        assert all(value in (0.0, 1.0) for value in rewards) and set(rewards.explanations) <= {"yes", "no"}
    assert (tmp_path / "vllm-judge-1.log").stat().st_size > 0  # its output kept beside the run's
    with pytest.raises(httpx.TransportError):
        httpx.get(endpoint.base_url.removesuffix("/v1") + "/health", timeout=2)
