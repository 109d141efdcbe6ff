"""The launches of a run's served judges: one server per judge model, a judge's settings rather
than training's, a context long enough for the questions, and the GPUs of the worker's split."""
import json

import pytest

from worker.trainer.config import TrainingConfig
from worker.trainer.rewards.judges.served import (CONTEXT_CAP, JudgeServingRefused, ServedJudges, context_needed,
                                                  placements)
from worker.trainer.rewards.judges.catalog import JudgeParams
from worker.trainer.spec import RewardSpec

SCORE = "Rate the answer from 0 to 10.\nQuestion: {prompt}\nAnswer: {completion}"
RANK = "Order these answers to {prompt}, best first:\n{completions}"


def judge(name, model="org/judge-a", template=SCORE, **params) -> RewardSpec:
    mode = "rank" if "{completions}" in template else "score"
    return RewardSpec(name=name, kind="judge", params={"model": model, "template": template, "mode": mode, **params})


def flag(launch, name):
    return launch.argv[launch.argv.index(name) + 1]


def config(**knobs):
    return TrainingConfig(**{"max_prompt_length": 100, "max_completion_length": 50, "num_generations": 4, **knobs})


def served(specs, run_config=None, **options) -> ServedJudges:
    return ServedJudges(specs, run_config or config(), output_dir="/nonexistent", **{"device": "cpu", **options})


def test_judges_naming_the_same_model_share_one_server():
    judges = served([judge("a"), judge("b", template=RANK), judge("c", model="org/judge-b")])
    assert list(judges.launches) == ["org/judge-a", "org/judge-b"]
    a, b = judges.endpoint("org/judge-a"), judges.endpoint("org/judge-b")
    assert a.base_url != b.base_url and a.api_key != b.api_key and a.api_key and b.api_key
    assert (a.model, a.vllm, a.base_url.endswith("/v1")) == ("judge", True, True)
    assert a.base_url == judges.launches["org/judge-a"].url + "/v1"


def test_only_served_judges_get_a_server():
    others = [RewardSpec(name="acc", kind="builtin", builtin="accuracy"),
              judge("remote", endpoint="url", base_url="https://api.example.com/v1"),
              RewardSpec(name="rm", kind="reward_model", params={"model": "org/rm"})]
    judges = served(others)
    assert not judges and judges.launches == {}
    judges.start().join()
    judges.stop()
    with pytest.raises(KeyError, match="no served judge names the model 'org/judge-a'"):
        judges.endpoint("org/judge-a")


def test_a_judge_is_served_as_it_is_never_trained_nor_pinned():
    run = config(lora=True, lora_serving="adapter", cpu_sharing="split_cores", weight_sync_backend="nccl")
    launch = served([judge("a")], run).launches["org/judge-a"]
    assert flag(launch, "serve") == "org/judge-a" and flag(launch, "--served-model-name") == "judge"
    assert launch.served_model_name == "judge" and launch.api_key
    assert "--enable-lora" not in launch.argv and "--weight-transfer-config" not in launch.argv
    assert "GRPO_VLLM_CPUS" not in launch.env and "VLLM_CPU_OMP_THREADS_BIND" not in launch.env
    assert "VLLM_SERVER_DEV_MODE" not in launch.env  # nothing is pushed to a judge
    assert launch.env["VLLM_API_KEY"] == launch.api_key and launch.api_key not in " ".join(launch.argv)
    # The policy server's guard (tests/security/test_vllm_api_key.py): every path but /health asks the key.
    assert flag(launch, "--middleware") == "worker.trainer.inference.api_key_guard.ApiKeyGuard"


def test_the_context_holds_the_template_prompt_and_completion_or_the_whole_group():
    run = config()
    score, rank = JudgeParams(model="m", template=SCORE), JudgeParams(model="m", template=RANK, mode="rank")
    assert context_needed(score, run) >= len(SCORE) + 100 + 50 + score.max_answer_tokens
    assert context_needed(rank, run) >= len(RANK) + 100 + 4 * 50
    column = JudgeParams(model="m", template=SCORE + "\nReference: {solution}")
    assert context_needed(column, run) > context_needed(score, run) + 400  # the column's text too
    judges = served([judge("a"), judge("b", template=RANK)])  # one server: the longer of the two
    assert int(flag(judges.launches["org/judge-a"], "--max-model-len")) == context_needed(rank, run)


def test_the_context_is_capped_at_what_the_model_holds(tmp_path, monkeypatch):
    monkeypatch.setenv("MODEL_DIRS", str(tmp_path))
    (tmp_path / "small").mkdir()
    (tmp_path / "small" / "config.json").write_text(json.dumps({"max_position_embeddings": 300}))
    judges = served([judge("a", model=str(tmp_path / "small"), template=RANK)])
    assert flag(judges.launches[str(tmp_path / "small")], "--max-model-len") == "300"
    long_group = served([judge("a", template=RANK)], config(num_generations=64, per_device_train_batch_size=64,
                                                                max_completion_length=4096))
    assert flag(long_group.launches["org/judge-a"], "--max-model-len") == str(CONTEXT_CAP)


def test_a_model_outside_the_allowed_directories_is_refused(tmp_path):
    from worker.trainer.models.paths import ModelRefused

    with pytest.raises(ModelRefused, match="outside the directories the operator allows"):
        served([judge("a", model=str(tmp_path))])


class TestGpus:
    def test_the_judges_own_gpus_are_passed_through(self):
        launch = served([judge("a")], config(judge_gpus=2), gpu_ids="2,3", device="cuda").launches["org/judge-a"]
        assert launch.env["CUDA_VISIBLE_DEVICES"] == "2,3"
        assert flag(launch, "--data-parallel-size") == "2" and flag(launch, "--gpu-memory-utilization") == "0.9"

    def test_two_judge_models_split_the_gpus_or_share_one(self):
        two = served([judge("a"), judge("b", model="org/judge-b")], config(judge_gpus=2), gpu_ids="2,3",
                     device="cuda")
        assert [launch.env["CUDA_VISIBLE_DEVICES"] for launch in two.launches.values()] == ["2", "3"]
        one = served([judge("a"), judge("b", model="org/judge-b")], config(judge_gpus=1), gpu_ids="4", device="cuda")
        assert [launch.env["CUDA_VISIBLE_DEVICES"] for launch in one.launches.values()] == ["4", "4"]
        assert [flag(launch, "--gpu-memory-utilization") for launch in one.launches.values()] == ["0.45", "0.45"]

    def test_on_the_policy_servers_gpus_a_judge_takes_what_the_server_leaves(self):
        run = config(vllm_gpu_memory_utilization=0.6)
        launch = served([judge("a")], run, gpu_ids="0", device="cuda").launches["org/judge-a"]
        assert launch.env["CUDA_VISIBLE_DEVICES"] == "0"
        assert float(flag(launch, "--gpu-memory-utilization")) == pytest.approx(0.35)

    def test_a_server_that_leaves_too_little_is_refused_with_what_to_change(self):
        refusal = r"vllm_gpu_memory_utilization \(0.92\) leaves 1 judge server\(s\) 0.03 .*lower .*judge_gpus"
        with pytest.raises(JudgeServingRefused, match=refusal):
            served([judge("a")], config(vllm_gpu_memory_utilization=0.92), gpu_ids="0", device="cuda")
        launch = served([judge("a")], config(), gpu_ids="0", device="cuda").launches["org/judge-a"]  # 0.9 leaves 0.05
        assert float(flag(launch, "--gpu-memory-utilization")) == pytest.approx(0.05)

    def test_on_a_cpu_there_are_no_gpus(self):
        assert placements(2, "0,1", "cpu", config())[0].gpu_ids is None
        assert placements(0, "0", "cuda", config()) == []
