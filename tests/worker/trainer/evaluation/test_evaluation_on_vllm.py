"""Evaluation during a real run: a real vLLM serving a tiny model, the real control plane.

Evaluated before the first step, every eval_steps and after the last, judged by the evaluation
rewards alone, on rows training never saw; the outcomes are stored per example and an evaluation
reward that fails is a warning, not a failed run.
"""
import pytest

from tests.support.asgi_server import AsgiServer, logged_in_client

SEED = """
import json
from django.contrib.auth import get_user_model
from runs.models import Dataset, RewardFunction, Run, RunEvalReward, RunReward
from runs.training_runs.launch import build_launch_spec
from worker.trainer.config import TrainingConfig
owner = get_user_model().objects.create_user("owner", password="owner-pass-123")
dataset = Dataset.objects.create(owner=owner, name="arith", source="generator", generator="arithmetic",
                                 generator_params={"count": 40, "difficulty": 1, "seed": 0}, row_count=40,
                                 columns=["prompt", "answer"])
fmt = RewardFunction.objects.create(owner=owner, name="format", kind="builtin", builtin="format",
                                    params={"regex": "(?s) .*"})
length = RewardFunction.objects.create(owner=owner, name="length", kind="builtin", builtin="length",
                                       params={"max_tokens": 4, "soft_penalty_tokens": 8})
# Python code, in the sandbox: it fails on every answer that does not start with a space.
broken = RewardFunction.objects.create(owner=owner, name="picky", kind="code", source='''
def reward(prompts, completions, **columns):
    if any(not c.startswith(" ") for c in completions):
        raise ValueError("an answer without a leading space")
    return [1.0 for c in completions]
''')
config = TrainingConfig(model=MODEL, num_generations=4, per_device_train_batch_size=8, max_steps=5,
                        max_prompt_length=64, max_completion_length=8, learning_rate=5e-3, save_steps=5,
                        max_staleness=1, max_inflight_tasks=8, temperature=1.0, seed=1,
                        eval_steps=2, eval_holdout_fraction=0.25, eval_examples=6, eval_samples=3,
                        eval_temperature=1.0, eval_pass_threshold=0.5).model_dump()
run = Run.objects.create(owner=owner, name="judged", dataset=dataset, config=config)
RunReward.objects.create(run=run, reward_function=fmt, weight=1.0)
RunEvalReward.objects.create(run=run, reward_function=length, weight=1.0)
RunEvalReward.objects.create(run=run, reward_function=broken, weight=0.0)
run.enqueue()
token = run.issue_ingest_token()
run.save()
print(json.dumps(build_launch_spec(run, token)))
"""

OUTCOMES = """
import json
from runs.models import EvalOutcome
rows = EvalOutcome.objects.filter(run_id=RUN_ID).order_by("step", "index")
print(json.dumps([{"step": r.step, "index": r.index, "key": r.key, "samples": r.samples,
                   "rewards": sorted(r.answers[0]["rewards"])} for r in rows]))
"""


@pytest.mark.slow
def test_a_run_is_evaluated_before_every_eval_steps_and_after_the_last(tiny_model_dir, tmp_path):
    from worker.trainer.app import run_trainer
    from worker.trainer.config import TrainingConfig
    from worker.trainer.inference.server import VLLMServer

    (tmp_path / "cp").mkdir()
    config = TrainingConfig(max_prompt_length=64, max_completion_length=8)
    with AsgiServer(tmp_path / "cp") as control_plane, \
            VLLMServer.for_config(str(tiny_model_dir), config, log_path=tmp_path / "vllm.log") as vllm:
        vllm.wait_until_healthy()
        spec = control_plane.shell_json(f"MODEL = {str(tiny_model_dir)!r}\n" + SEED)
        assert run_trainer({**spec, "inference_url": vllm.url}) == "succeeded"
        owner = logged_in_client(control_plane, "owner", "owner-pass-123")
        run_id = spec["run_id"]
        metrics = owner.get(f"/api/runs/{run_id}/metrics/",
                            params={"names": "eval/pass@1,eval/pass@3,eval/reward/length_mean"}).json()
        logs = owner.get(f"/api/runs/{run_id}/logs/", params={"page_size": 1000}).json()
        outcomes = control_plane.shell_json(f"RUN_ID = {run_id}\n" + OUTCOMES)
    # Before training, at 2 and 4, and after the last step (5).
    assert metrics["series"]["eval/pass@1"]["step"] == [0, 2, 4, 5]
    assert metrics["series"]["eval/pass@3"]["step"] == [0, 2, 4, 5]
    assert metrics["series"]["eval/reward/length_mean"]["step"] == [0, 2, 4, 5]
    assert "rollout/reward/length_mean" not in metrics["names"]  # a judge, not a training reward
    assert [(o["step"], o["index"]) for o in outcomes] == [(s, i) for s in (0, 2, 4, 5) for i in range(6)]
    assert {o["samples"] for o in outcomes} == {3} and {tuple(o["rewards"]) for o in outcomes} == {("length", "picky")}
    # The same examples every time, rows training never saw.
    assert len({o["key"] for o in outcomes}) == 6
    messages = [line["message"] for line in logs["results"]]
    held_out = "evaluation holds out 9 distinct problems (9 of the dataset's 40 rows)"  # 35 distinct of 40
    assert any(held_out in m for m in messages), messages
    assert any(line["level"] == "warning" and "evaluation reward 'picky' failed" in line["message"]
               for line in logs["results"]), messages
