"""Judges answered by a real vLLM on the CPU serving the default model (SmolLM2-135M-Instruct),
behind the run's API key as a served judge is: each mode's answer is constrained by vLLM's
structured outputs and parses to a number; check() accepts the key and refuses a wrong one
with the server's message. One server for the module (about a minute to start)."""
import re

import pytest

from worker.trainer.rewards.judges import parsing
from worker.trainer.rewards.judges.catalog import JudgeParams
from worker.trainer.rewards.judges.judge import Judge, JudgeEndpoint, JudgeEndpointError

PROMPTS = ["What is 2 + 2?"] * 3
COMPLETIONS = ["4", "2 + 2 = 4", "5"]


@pytest.fixture(scope="module")
def server(smollm2_dir, tmp_path_factory):
    from worker.trainer.config import TrainingConfig
    from worker.trainer.inference.launch import new_api_key
    from worker.trainer.inference.server import VLLMServer

    config = TrainingConfig(max_prompt_length=448, max_completion_length=64, vllm_kv_cache_gib=1)
    log_path = tmp_path_factory.mktemp("judge-vllm") / "vllm.log"
    with VLLMServer.for_config(str(smollm2_dir), config, log_path=log_path, api_key=new_api_key()) as server:
        yield server


def endpoint(server, api_key: str | None = None, model: str | None = None) -> JudgeEndpoint:
    return JudgeEndpoint(server.url + "/v1", model or server.served_model_name,
                         api_key if api_key is not None else server.api_key, vllm=True)


@pytest.fixture
def judge(server):
    judges, warnings = [], []

    def make(**params) -> Judge:
        made = Judge(f"judge-{len(judges)}", JudgeParams(model=server.served_model_name, **params), endpoint(server),
                     on_warning=warnings.append)
        made.warnings = warnings
        judges.append(made)
        return made

    yield make
    for made in judges:
        made.close()


@pytest.mark.slow
def test_a_score_judge_answers_a_number_on_its_scale(judge):
    scorer = judge(template="Question: {prompt}\nAnswer: {completion}\nRate the answer from 0 to 10. Reply "
                            "with the number only.", mode="score", max_answer_tokens=6)
    rewards = scorer(PROMPTS, COMPLETIONS)
    assert all(isinstance(value, float) and 0.0 <= value <= 1.0 for value in rewards), (rewards, scorer.warnings)
    pattern = parsing.score_regex(scorer.params)
    assert all(re.fullmatch(pattern, raw) for raw in rewards.explanations), rewards.explanations
    metrics = scorer.take_metrics()
    assert metrics["calls"] == 3 and metrics["failures"] == 0 and metrics["prompt_tokens"] > 0


@pytest.mark.slow
def test_a_choice_judge_answers_one_of_its_labels(judge):
    chooser = judge(template="Question: {prompt}\nAnswer: {completion}\nIs the answer correct? Say Correct or "
                             "Wrong.", mode="choice", labels={"Correct": 1.0, "Wrong": 0.0}, max_answer_tokens=4)
    rewards = chooser(PROMPTS, COMPLETIONS)
    assert set(rewards.explanations) <= {"Correct", "Wrong"}, rewards.explanations
    assert [chooser.params.labels[raw] for raw in rewards.explanations] == rewards


@pytest.mark.slow
def test_a_rank_judge_orders_the_group(judge):
    ranker = judge(template="Question: {prompt}\nAnswers:\n{completions}\nRank the answers from best to worst "
                            'as JSON: {{"ranking": [...]}}', mode="rank")
    rewards = ranker(PROMPTS, COMPLETIONS)
    assert sorted(rewards) == [0.0, 0.5, 1.0], (rewards.explanations, ranker.warnings)
    assert len(set(rewards.explanations)) == 1  # the group's one answer, beside each completion


@pytest.mark.slow
def test_the_served_judges_key_is_checked(server):
    with Judge("keyed", JudgeParams(template="{completion}", model="policy"), endpoint(server)) as judge:
        judge.check()
    with Judge("keyed", JudgeParams(template="{completion}", model="policy"), endpoint(server, "wrong")) as judge:
        with pytest.raises(JudgeEndpointError, match=r"judge 'keyed': the endpoint at http://127\.0\.0\.1:\d+/v1 "
                                                     r"refused the API key \(HTTP 401: .*API key"):
            judge.check()


@pytest.mark.slow
def test_a_model_the_server_does_not_serve_is_named(server):
    with Judge("lost", JudgeParams(template="{completion}", model="gpt-9"), endpoint(server, model="gpt-9")) as judge:
        with pytest.raises(JudgeEndpointError, match="does not know the model 'gpt-9'"):
            judge.check()
