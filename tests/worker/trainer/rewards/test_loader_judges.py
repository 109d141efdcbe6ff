"""The loader builds judges and reward models: each on its endpoint (a URL with its key, or the
worker's own judge server), a reward model on the policy's device; each built once, closed once.
The Judge and RewardModel themselves are stubbed (tests/worker/trainer/rewards/judges/ tests them)."""
import pytest

from worker.trainer.rewards.judges import judge as judge_module
from worker.trainer.rewards.judges import reward_model as reward_model_module
from worker.trainer.rewards.judges.judge import JudgeEndpoint
from worker.trainer.rewards.loader import RewardLoader, RewardSetupError, check_reward_specs, served_judge_specs
from worker.trainer.spec import RewardSpec

CHOICE = {"template": "Is {completion} an answer to {prompt}?", "mode": "choice", "labels": {"yes": 1, "no": 0},
          "model": "judge-model", "pass_threshold": 0.7}
AT_URL = {**CHOICE, "endpoint": "url", "base_url": "https://judges.example/v1", "model": "gpt-judge"}


class StubJudge:
    built: list["StubJudge"] = []

    def __init__(self, name, params, endpoint, on_warning=None, transport=None):
        self.name, self.params, self.endpoint = name, params, endpoint
        self.closed = 0
        StubJudge.built.append(self)

    def __call__(self, prompts, completions, **columns):
        return [1.0] * len(completions)

    def take_metrics(self):
        return {"calls": 1.0}

    def close(self):
        self.closed += 1


class StubRewardModel:
    def __init__(self, name, params, device="cpu"):
        self.name, self.params, self.device = name, params, device
        self.closed = 0

    def __call__(self, prompts, completions, task_prompts=None, **columns):
        return [0.0] * len(completions)

    def take_metrics(self):
        return {"completions": 0.0}

    def close(self):
        self.closed += 1


class StubServed:
    def endpoint(self, model):
        return JudgeEndpoint(base_url=f"http://127.0.0.1:9/{model}/v1", model="judge", api_key="served-key",
                             vllm=True)


@pytest.fixture(autouse=True)
def stubs(monkeypatch):
    StubJudge.built = []
    monkeypatch.setattr(judge_module, "Judge", StubJudge)
    monkeypatch.setattr(reward_model_module, "RewardModel", StubRewardModel)


def spec(name, kind, **fields):
    return RewardSpec(name=name, kind=kind, **fields)


def test_a_url_judge_calls_its_base_url_with_the_key_fetched_for_it():
    loader = RewardLoader(api_keys={"style": "sk-secret", "other": "sk-other"})
    [function] = loader.load([spec("style", "judge", params=AT_URL, has_api_key=True, weight=0.5)])
    [judge] = StubJudge.built
    assert judge.endpoint == JudgeEndpoint(base_url="https://judges.example/v1", model="gpt-judge",
                                           api_key="sk-secret", vllm=False)
    assert function.fn is judge and function.weight == 0.5
    assert function.pass_threshold == 0.7 and function.reads_task_prompts and not function.verifier
    assert function.take_metrics() == {"calls": 1.0}
    assert loader.endpoint_judges() == [judge]


def test_a_url_judge_without_a_key_sends_none():
    [function] = RewardLoader().load([spec("style", "judge", params=AT_URL)])
    assert function.fn.endpoint.api_key is None


def test_a_url_judge_whose_key_was_not_fetched_is_refused_naming_it():
    with pytest.raises(RewardSetupError, match="'style'.*API key"):
        RewardLoader(api_keys={"other": "sk-other"}).load([spec("style", "judge", params=AT_URL, has_api_key=True)])


def test_a_served_judge_calls_the_workers_own_judge_server():
    loader = RewardLoader(served=StubServed())
    [function] = loader.load([spec("helpful", "judge", params=CHOICE)])
    assert function.fn.endpoint == JudgeEndpoint(base_url="http://127.0.0.1:9/judge-model/v1", model="judge",
                                                 api_key="served-key", vllm=True)
    assert loader.endpoint_judges() == []  # served: nothing to check at a URL


def test_a_served_judge_without_a_judge_server_is_refused():
    with pytest.raises(RewardSetupError, match="'helpful'.*no judge server"):
        RewardLoader().load([spec("helpful", "judge", params=CHOICE)])


def test_a_reward_model_loads_on_the_policys_device_and_reads_the_task_prompt():
    [function] = RewardLoader(device="cuda:0").load([spec("rm", "reward_model", params={"model": "tiny-rm"})])
    assert isinstance(function.fn, StubRewardModel) and function.fn.device == "cuda:0"
    assert function.fn.params.model == "tiny-rm"
    assert function.reads_task_prompts and function.pass_threshold is None
    assert function.take_metrics() == {"completions": 0.0}


def test_rule_rewards_keep_their_verifier_flag_and_read_no_task_prompt():
    [accuracy] = RewardLoader().load([spec("acc", "builtin", builtin="accuracy", verifier=True)])
    assert accuracy.verifier and not accuracy.reads_task_prompts and accuracy.take_metrics is None


def test_a_reward_in_training_and_evaluation_shares_one_judge_closed_once():
    loader = RewardLoader(served=StubServed())
    helpful = spec("helpful", "judge", params=CHOICE)
    training = loader.load([helpful, spec("rm", "reward_model", params={"model": "tiny-rm"})])
    evaluation = loader.load([helpful, spec("stricter", "judge", params={**CHOICE, "pass_threshold": 0.9})])
    assert evaluation[0].fn is training[0].fn
    assert evaluation[1].fn is not training[0].fn and evaluation[1].pass_threshold == 0.9
    loader.close()
    assert [judge.closed for judge in StubJudge.built] == [1, 1]
    assert training[1].fn.closed == 1


def test_served_judges_are_the_judges_without_a_url():
    specs = [spec("helpful", "judge", params=CHOICE), spec("style", "judge", params=AT_URL),
             spec("acc", "builtin", builtin="accuracy")]
    assert [s.name for s in served_judge_specs(specs)] == ["helpful"]


@pytest.mark.parametrize(("reward", "message"), [
    (spec("j", "judge", params={**CHOICE, "template": "Rate {prompt}"}), r"'j'.*must see the answer"),
    (spec("j", "judge", params={**CHOICE, "temperature": 9}), r"'j': temperature: .*less than or equal to 2"),
    (spec("rm", "reward_model", params={"model": "m", "batch_size": 0}), r"'rm': batch_size: .*greater than"),
    (spec("len", "builtin", builtin="no_such_reward"), r"'len'"),
])
def test_bad_parameters_are_refused_before_anything_loads_naming_the_reward_and_field(reward, message):
    with pytest.raises(RewardSetupError, match=message):
        check_reward_specs([reward])
    assert StubJudge.built == []
