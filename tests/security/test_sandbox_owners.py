"""Attack: account A's reward replaces `builtins.compile` in its warm sandbox process, to keep (and
swap) the next source that process loads. Account B then dry-runs a reward holding a secret, and A
dry-runs again to read what was kept. Each goes through the API's dry-run route into the real
sandbox: B's dry run runs in processes of B's own, so A's next output holds no secret, and B's
scores are B's code's. The same for staff dry-running A's code and then their own: staff's code
never meets A's patched process. Nothing stored changes."""
import pytest

from runs.datasets.models import Dataset
from runs.rewards.models.function import RewardFunction
from runs.rewards import sandbox_pool
from tests.support.reward_authors import grant_reward_authoring

# Kept on `builtins`, which outlives one call in a warm process; swaps any other reward for -1.
SPY = '''
import builtins
if not hasattr(builtins, "kept_sources"):
    builtins.kept_sources = []
    real_compile = builtins.compile
    def spying_compile(source, filename, mode, *args, **kwargs):
        if isinstance(source, str) and "SPY_ITSELF" not in source:
            builtins.kept_sources.append(source)
            source = "def reward(prompts, completions, **columns):\\n    return [-1.0] * len(completions)\\n"
        return real_compile(source, filename, mode, *args, **kwargs)
    builtins.compile = spying_compile

def reward(prompts, completions, **columns):
    print("kept:", builtins.kept_sources)  # SPY_ITSELF
    return [0.0] * len(completions)
'''
SECRET = "b-secret-7f3a9c"
HOLDS_A_SECRET = f'''
SECRET = "{SECRET}"

def reward(prompts, completions, **columns):
    return [1.0 if SECRET else 0.0] * len(completions)
'''


@pytest.fixture(autouse=True)
def fresh_pools(monkeypatch):
    """The pools the dry-run route uses, as the web process makes them, emptied for this test."""
    pools = sandbox_pool.OwnerPools()
    monkeypatch.setattr(sandbox_pool, "owner_pools", pools)
    yield pools
    pools.close()


def dataset_of(user) -> Dataset:
    return Dataset.objects.create(
        owner=user, name="arith", source=Dataset.Source.GENERATOR, generator="arithmetic",
        generator_params={"count": 4, "difficulty": 1, "seed": 0}, columns=["prompt", "answer"],
        row_count=4, preview=[])


def code_reward(user, name: str, source: str) -> RewardFunction:
    grant_reward_authoring(user)
    return RewardFunction.objects.create(owner=user, name=name, kind="code", source=source)


def dry_run(api, reward: RewardFunction, dataset: Dataset) -> dict:
    response = api.post(f"/api/reward-functions/{reward.pk}/dry-run/",
                        {"dataset": dataset.pk, "completions": ["#### 6"]}, format="json")
    assert response.status_code == 200, response.content
    row = response.json()["rows"][0]
    assert row["error"] is None, row["error"]
    return row


def stored() -> list:
    return list(RewardFunction.objects.order_by("pk").values())


def test_another_accounts_dry_run_is_not_captured_by_a_patched_warm_process(owner, owner_api, other_user, other_api):
    spy = code_reward(owner, "spy", SPY)
    secret = code_reward(other_user, "secret", HOLDS_A_SECRET)
    spy_data, secret_data = dataset_of(owner), dataset_of(other_user)
    before = stored()

    assert dry_run(owner_api, spy, spy_data)["output"] == "kept: []\n"  # the patch is in place
    victim = dry_run(other_api, secret, secret_data)
    again = dry_run(owner_api, spy, spy_data)

    assert SECRET not in again["output"] and again["output"] == "kept: []\n"
    assert victim["scores"] == [1.0], victim  # B's own code scored, not the spy's swap
    assert stored() == before


def test_staff_dry_running_an_accounts_code_keep_their_own_code_out_of_its_process(
        owner, owner_api, staff_user, staff_api):
    spy = code_reward(owner, "spy", SPY)
    staff_secret = code_reward(staff_user, "secret", HOLDS_A_SECRET)
    spy_data, staff_data = dataset_of(owner), dataset_of(staff_user)
    before = stored()

    assert dry_run(staff_api, spy, spy_data)["output"] == "kept: []\n"  # staff look at A's code
    own = dry_run(staff_api, staff_secret, staff_data)
    seen_by_staff = dry_run(staff_api, spy, spy_data)
    seen_by_owner = dry_run(owner_api, spy, spy_data)

    assert SECRET not in seen_by_staff["output"] and SECRET not in seen_by_owner["output"]
    assert own["scores"] == [1.0], own
    assert stored() == before
