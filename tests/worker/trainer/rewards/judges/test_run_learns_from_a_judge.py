"""A run that learns from a judge alone, on real parts: the default model (SmolLM2-135M-Instruct)
as the policy behind a real vLLM, the same model served as a choice judge on a second vLLM, and
the trainer's events in JSONL files as the control plane reads them.

A 135M judge is no grader (it cannot tell a fruit from a car, nor text that starts with a digit
from text that does not), but its answers are a deterministic function of the completion, and
that function is what GRPO optimises: the policy learns to write what this judge pays for. What
it learns differs from run to run (vLLM's sampling on the CPU is not reproduced bit for bit):
asked to name a fruit, one run came to open with "One ..." (5 of 64 completions in steps 1-4, 57
of 64 in steps 13-16; the judge says yes to 96% of them, a number word being near enough a
digit), another to name an invented fruit at once ("Fraxilla is a fruit of ...").
The measure is the share of judge-paid completions in the run's last steps against its first
ones, counted from the samples themselves, beyond twice its standard error. Measured: 0.58 over
steps 1-4 and 0.95 over steps 13-16 (5.6 standard errors), then 0.53 and 0.89 (4.9); 8-10
minutes beside other tests on two cores, the two vLLM starts included.
"""
import json
import math

import pytest

# Two vLLM servers (policy and judge) start on this machine's cores beside the trainer.
pytestmark = [pytest.mark.slow, pytest.mark.learning, pytest.mark.timeout(1200)]

PAYS = {"template": "Does this text start with a digit? Answer yes or no.\nText: {completion}", "mode": "choice",
        "labels": {"yes": 1.0, "no": 0.0}, "max_answer_tokens": 4}
# One prompt: each step's groups answer the same question, so the paid share of early and late
# steps differs by what the policy learned, not by which prompts the data order drew.
PROMPT = "Name a fruit."
STEPS, WINDOW = 16, 4


def config():
    from worker.trainer.config import TrainingConfig

    return TrainingConfig(num_generations=8, per_device_train_batch_size=16, max_steps=STEPS, max_prompt_length=64,
                          max_completion_length=12, learning_rate=5e-5, save_steps=STEPS, max_staleness=1,
                          max_inflight_tasks=16, temperature=1.0, seed=3, samples_groups_per_step=0,
                          vllm_kv_cache_gib=1)


def dataset_file(tmp_path):
    path = tmp_path / "prompts.jsonl"
    path.write_text("".join(json.dumps({"prompt": PROMPT}) + "\n" for _ in range(64)))
    return path


def paid_share(samples: list[dict]) -> tuple[float, float]:
    """The share of these completions the judge paid for, and its standard error."""
    paid = [sample["rewards"]["pays"] for sample in samples if sample["rewards"]["pays"] is not None]
    share = sum(paid) / len(paid)
    return share, math.sqrt(share * (1 - share) / len(paid))


def test_a_run_rewarded_by_a_served_judge_alone_learns_to_write_what_it_pays_for(smollm2_dir, tmp_path):
    from worker.trainer.app import run_trainer
    from worker.trainer.inference.launch import new_api_key
    from worker.trainer.inference.server import VLLMServer

    rewards = [{"name": "pays", "kind": "judge", "params": {**PAYS, "model": str(smollm2_dir)}}]
    with VLLMServer.for_config(str(smollm2_dir), config(), log_path=tmp_path / "policy.log",
                               api_key=new_api_key()) as server:
        server.wait_until_healthy()
        spec = {"run_id": 1, "model": str(smollm2_dir), "output_dir": str(tmp_path / "out"),
                "config": config().model_dump(), "rewards": rewards,
                "dataset": {"kind": "file", "path": str(dataset_file(tmp_path)), "format": "jsonl"},
                "inference_url": server.url, "inference_api_key": server.api_key}
        outcome = run_trainer(spec)
    events = [json.loads(line) for line in
              (tmp_path / "out" / "events" / "events-trainer-1.jsonl").read_text().splitlines()]
    assert outcome == "succeeded", [e for e in events if e["type"] in ("status", "log")][-5:]
    by_step: dict[int, list[dict]] = {}
    for event in events:
        if event["type"] == "samples":
            by_step.setdefault(event["step"], []).extend(event["samples"])
    steps = sorted(by_step)
    first = [s for step in steps[:WINDOW] for s in by_step[step]]
    last = [s for step in steps[-WINDOW:] for s in by_step[step]]
    (before, before_se), (after, after_se) = paid_share(first), paid_share(last)
    report = {step: paid_share(by_step[step])[0] for step in steps}
    print("judge-paid share by step:", report)
    assert after - before > 2 * math.hypot(before_se, after_se), report
    # The run's own metric says the same.
    means = {e["step"]: e["values"]["rollout/reward/pays_mean"] for e in events
             if e["type"] == "metrics" and "rollout/reward/pays_mean" in e["values"]}
    assert sum(means[step] for step in steps[-WINDOW:]) > sum(means[step] for step in steps[:WINDOW]), means
