"""Who sees what: the owner, another user, staff and an anonymous caller against every endpoint.

Another user's object must look exactly like a missing one (404, absent from lists),
never a 403 that confirms it exists; and a refused call must change nothing.
"""

import pytest
from django.utils import timezone

from runs.checkpoints.models.checkpoint import Checkpoint
from runs.datasets.models import Dataset
from runs.environments.models.environment import Environment, EnvironmentReward
from runs.rewards.models.function import RewardFunction
from runs.training_runs.models import Run, RunReward, RunStatus
from runs.configs.models import TrainingConfig

pytestmark = pytest.mark.usefixtures("broker")  # nothing here reaches a real broker

MODELS = (Dataset, RewardFunction, TrainingConfig, Environment, EnvironmentReward, Run, RunReward, Checkpoint)


@pytest.fixture
def world(owner, other_user, library_for):
    """The owner's things (with unreferenced spares that may be deleted, and a failed run with a
    checkpoint that may be resumed) next to another user's own things."""
    mine = library_for(owner, "mine")
    failed = Run.objects.create(owner=owner, name="mine-failed", dataset=mine["dataset"],
                                config=dict(mine["run"].config), status=RunStatus.FAILED, attempt=1)
    RunReward.objects.create(run=failed, reward_function=mine["reward"], weight=1.0)
    Checkpoint.objects.create(run=failed, step=10, path="/tmp/ckpt-10", created_at=timezone.now())
    spare_dataset = Dataset.objects.create(owner=owner, name="mine-spare", source=Dataset.Source.HUB, hub_id="a/b")
    spare_reward = RewardFunction.objects.create(owner=owner, name="mine-spare", kind="builtin", builtin="length")
    sums = Dataset.objects.create(owner=owner, name="mine-sums", source=Dataset.Source.GENERATOR,
                                  generator="arithmetic", generator_params={"count": 5})
    environment = Environment.objects.create(owner=owner, name="mine-env", kind="builtin", builtin="feedback",
                                             params={"turn_penalty": 0.0, "answer_column": "answer"}, dataset=sums)
    EnvironmentReward.objects.create(environment=environment, reward_function=mine["reward"])
    ids = {
        "dataset": spare_dataset.pk, "reward": spare_reward.pk, "config": mine["config"].pk,
        "run": mine["run"].pk, "failed_run": failed.pk, "environment": environment.pk,
    }
    return {"ids": ids, "mine": mine, "theirs": library_for(other_user, "theirs")}


def snapshot() -> dict:
    """Every stored row, so that a refused call can be shown to have changed nothing."""
    state = {}
    for model in MODELS:
        for row in model.objects.values():
            state[(model.__name__, row["id"])] = row
    return state


# (case, method, path, body, what the owner gets)
ENDPOINTS = [
    ("dataset-detail", "get", "/api/datasets/{dataset}/", None, 200),
    ("dataset-update", "patch", "/api/datasets/{dataset}/", {"name": "renamed"}, 200),
    ("dataset-delete", "delete", "/api/datasets/{dataset}/", None, 204),
    ("reward-detail", "get", "/api/reward-functions/{reward}/", None, 200),
    ("reward-update", "patch", "/api/reward-functions/{reward}/", {"description": "changed"}, 200),
    ("reward-delete", "delete", "/api/reward-functions/{reward}/", None, 204),
    ("environment-detail", "get", "/api/environments/{environment}/", None, 200),
    ("environment-update", "patch", "/api/environments/{environment}/", {"description": "changed"}, 200),
    ("environment-dry-run", "post", "/api/environments/{environment}/dry-run/", {"turns": ["#### 1"]}, 200),
    ("environment-delete", "delete", "/api/environments/{environment}/", None, 204),
    ("config-detail", "get", "/api/configs/{config}/", None, 200),
    ("config-update", "patch", "/api/configs/{config}/", {"values": {"max_steps": 7}}, 200),
    ("config-delete", "delete", "/api/configs/{config}/", None, 204),
    ("run-detail", "get", "/api/runs/{run}/", None, 200),
    ("run-update", "patch", "/api/runs/{run}/", {"name": "renamed"}, 200),
    ("run-delete", "delete", "/api/runs/{run}/", None, 204),
    ("run-start", "post", "/api/runs/{run}/start/", None, 200),
    ("run-cancel", "post", "/api/runs/{run}/cancel/", None, 200),
    ("run-resume", "post", "/api/runs/{failed_run}/resume/", None, 200),
    ("run-clone", "post", "/api/runs/{run}/clone/", {}, 201),
    ("run-metrics", "get", "/api/runs/{run}/metrics/", None, 200),
    ("run-samples", "get", "/api/runs/{run}/samples/", None, 200),
    ("run-logs", "get", "/api/runs/{run}/logs/", None, 200),
    ("run-checkpoints", "get", "/api/runs/{failed_run}/checkpoints/", None, 200),
    ("run-alarms", "get", "/api/runs/{run}/alarms/", None, 200),
]
CASES = pytest.mark.parametrize("method,path,body,owner_status", [case[1:] for case in ENDPOINTS],
                                ids=[case[0] for case in ENDPOINTS])


def call(client, method, path, body, ids):
    return getattr(client, method)(path.format(**ids), body, format="json")


@CASES
def test_owner_can_use_every_endpoint(owner_api, world, method, path, body, owner_status):
    response = call(owner_api, method, path, body, world["ids"])
    assert response.status_code == owner_status, response.content


@CASES
def test_staff_can_use_every_endpoint_on_anyones_objects(staff_api, world, method, path, body, owner_status):
    response = call(staff_api, method, path, body, world["ids"])
    assert response.status_code == owner_status, response.content


@CASES
def test_another_user_gets_404_and_changes_nothing(other_api, world, method, path, body, owner_status):
    before = snapshot()
    response = call(other_api, method, path, body, world["ids"])
    assert response.status_code == 404, response.content
    assert snapshot() == before


@CASES
def test_anonymous_caller_gets_401_and_changes_nothing(anon_api, world, method, path, body, owner_status):
    before = snapshot()
    response = call(anon_api, method, path, body, world["ids"])
    assert response.status_code == 401, response.content
    assert snapshot() == before


LISTS = pytest.mark.parametrize("path,kind", [
    ("/api/datasets/", "dataset"), ("/api/reward-functions/", "reward"),
    ("/api/configs/", "config"), ("/api/runs/", "run"),
])


def listed_ids(client, path) -> set[int]:
    response = client.get(path)
    assert response.status_code == 200, response.content
    return {item["id"] for item in response.json()["results"]}


@LISTS
def test_lists_show_users_only_their_own_objects(owner_api, other_api, world, path, kind):
    mine, theirs = world["mine"][kind].pk, world["theirs"][kind].pk
    owner_sees, other_sees = listed_ids(owner_api, path), listed_ids(other_api, path)
    assert mine in owner_sees and theirs not in owner_sees
    assert theirs in other_sees and mine not in other_sees


@LISTS
def test_staff_lists_show_everyones_objects(staff_api, world, path, kind):
    assert {world["mine"][kind].pk, world["theirs"][kind].pk} <= listed_ids(staff_api, path)


@LISTS
def test_anonymous_lists_are_refused(anon_api, world, path, kind):
    assert anon_api.get(path).status_code == 401


@pytest.mark.parametrize("foreign", [None, "dataset", "reward", "config"])
def test_a_run_can_only_be_made_from_objects_the_user_can_see(other_api, world, foreign):
    parts = {kind: (world["mine"] if kind == foreign else world["theirs"])[kind].pk
             for kind in ("dataset", "reward", "config")}
    body = {"name": "borrowed", "dataset": parts["dataset"], "config_template": parts["config"],
            "rewards": [{"reward_function": parts["reward"], "weight": 1.0}]}
    response = other_api.post("/api/runs/", body, format="json")
    if foreign is None:
        assert response.status_code == 201, response.content
        return
    assert response.status_code == 400, response.content
    errors = response.json()
    message = {"dataset": lambda: errors["dataset"], "config": lambda: errors["config_template"],
               "reward": lambda: errors["rewards"]["0"]["reward_function"]}[foreign]()
    assert "does not exist" in str(message)
    assert not Run.objects.filter(name="borrowed").exists()
