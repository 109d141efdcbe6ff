"""Where the kernel can refuse user code's network neither by a seccomp filter, nor by a network
namespace, nor by Landlock ABI 4+ (forced here by turning all three off), user code is not run,
and the user is told why and which setting an operator may flip (SANDBOX_ALLOW_NETWORK=1): a
reward's dry run answers 200 with each row's error, an environment's dry run with the episode's
error, and a run fails at start with that reason. Nothing stored changes."""
import pytest

from runs.environments.models.environment import Environment, EnvironmentReward
from runs.rewards.models.function import RewardFunction
from tests.support.reward_authors import grant_reward_authoring
from tests.support.sandbox import one_pool_for_every_owner
from worker.trainer.rewards.sandbox import pool as pool_module
from worker.trainer.rewards.sandbox.isolation import Isolation

OPEN_NETWORK = Isolation(namespaces=False, landlock_network=False, socket_filter=False, allow_network=False)
REFUSAL = "user code was not run: this machine cannot keep it off the network"
SETTING = "SANDBOX_ALLOW_NETWORK=1"
CODE = "def reward(prompts, completions, **columns):\n    return [1.0] * len(completions)\n"


@pytest.fixture
def open_network_pool(monkeypatch):
    with one_pool_for_every_owner(monkeypatch, OPEN_NETWORK) as pool:
        yield pool


def test_a_reward_dry_run_answers_each_row_with_the_refusal(owner_api, owner, dataset, open_network_pool):
    grant_reward_authoring(owner)
    reward = RewardFunction.objects.create(owner=owner, name="mine", kind="code", source=CODE)
    before = list(RewardFunction.objects.values())
    response = owner_api.post(f"/api/reward-functions/{reward.pk}/dry-run/",
                              {"dataset": dataset.pk, "completions": ["#### 6", "#### -2"]}, format="json")
    assert response.status_code == 200, response.content
    for row in response.json()["rows"]:
        assert row["scores"] is None and row["error"]["kind"] == "refused"
        assert row["error"]["message"].startswith(REFUSAL) and SETTING in row["error"]["message"]
    assert open_network_pool.processes_started == 0
    assert list(RewardFunction.objects.values()) == before


def test_an_environment_dry_run_ends_with_the_refusal(owner_api, owner, dataset, reward, open_network_pool):
    grant_reward_authoring(owner)
    environment = Environment.objects.create(owner=owner, name="mine", kind="code", dataset=dataset,
                                             source="def step(messages, row):\n    return None\n")
    EnvironmentReward.objects.create(environment=environment, reward_function=reward)
    before = list(Environment.objects.values())
    response = owner_api.post(f"/api/environments/{environment.pk}/dry-run/", {"turns": ["#### 6"]}, format="json")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["end_reason"] == "environment_error" and body["error"]["kind"] == "refused"
    assert body["error"]["message"].startswith(REFUSAL) and SETTING in body["error"]["message"]
    assert body["turns"] == [] and body["reward"] is None
    assert list(Environment.objects.values()) == before


def test_a_run_with_code_rewards_fails_at_start_with_the_refusal(tmp_path, monkeypatch):
    pytest.importorskip("torch")
    from tests.support.trainers import logged_lines, trainer_for

    monkeypatch.setattr(pool_module, "Isolation", lambda: OPEN_NETWORK)
    run = trainer_for(tmp_path, rewards=[{"name": "mine", "kind": "code", "source": CODE}])
    assert run.run() == "failed"
    reason = next(line for line in logged_lines(tmp_path) if line.startswith("SandboxError"))
    assert REFUSAL in reason and SETTING in reason
    assert run.reward_sandbox.processes_started == 0 and run.reward_sandbox.closed
