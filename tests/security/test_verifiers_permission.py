"""Attack: run a package's code on the workers through a verifiers environment without the code
authors' permission (a verifiers environment imports its package and calls load_environment with
any arguments given). Against a live server, as a user without the permission: creating one over
the API or the page, turning a built-in into one, and starting a run on one saved before the rule
(or on its rows as a dataset) are each refused with 403, naming the permission and the setting,
and nothing stored changes."""
import os
from pathlib import Path

import pytest

from tests.support.asgi_server import AsgiServer, logged_in_client

VERIFIERS_ENVIRONMENTS = Path(__file__).resolve().parents[1] / "support" / "verifiers_envs"
NAMED = ("runs.author_reward_code", "VERIFIERS_ENVIRONMENTS_ALLOWED")

SEED = """
import json
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token
from runs.models import Dataset, Environment, EnvironmentReward, RewardFunction, Run
from worker.trainer.config import TrainingConfig
mallory = get_user_model().objects.create_user("mallory", password="mallory-pass-123")
tasks = Dataset.objects.create(owner=mallory, name="tasks", source="generator", generator="arithmetic", row_count=1)
reward = RewardFunction.objects.create(owner=mallory, name="acc", kind="builtin", builtin="accuracy")
calc = Environment.objects.create(owner=mallory, name="calc", kind="builtin", builtin="calculator", dataset=tasks)
EnvironmentReward.objects.create(environment=calc, reward_function=reward)
# Saved before the rule held (or by hand): a verifiers environment and its rows, and runs on each.
legacy = Environment.objects.create(owner=mallory, name="legacy", kind="verifiers", verifiers_id="vf-tiny",
                                    params={"size": 4})
config = TrainingConfig().model_dump()
on_environment = Run.objects.create(owner=mallory, name="on-env", dataset=legacy.dataset, environment=legacy,
                                    config=config)
on_rows = Run.objects.create(owner=mallory, name="on-rows", dataset=legacy.dataset, config=config)
print(json.dumps({"key": Token.objects.create(user=mallory).key, "calc": calc.pk, "tasks": tasks.pk,
                  "reward": reward.pk, "on_environment": on_environment.pk, "on_rows": on_rows.pk}))
"""

STORED = """
import json
from runs.models import Dataset, Environment, Run
print(json.dumps({
    "environments": sorted(Environment.objects.values_list("pk", "name", "kind", "builtin", "verifiers_id",
                                                           "dataset_id", "updated_at")),
    "datasets": sorted(Dataset.objects.values_list("pk", "name", "source", "hub_id")),
    "runs": sorted(Run.objects.values_list("pk", "status", "attempt", "ingest_token_hash", "launch_spec")),
}, default=str))
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    # vf-tiny is installed where this control plane runs, so only the permission stands in the way.
    path = os.pathsep.join(filter(None, [str(VERIFIERS_ENVIRONMENTS), os.environ.get("PYTHONPATH")]))
    with AsgiServer(tmp_path_factory.mktemp("cp"), env={"PYTHONPATH": path,
                                                        "VERIFIERS_ENVIRONMENTS_ALLOWED": ""}) as live:
        live.seeded = live.shell_json(SEED)
        yield live


@pytest.fixture
def mallory(server):
    client = logged_in_client(server, "mallory", "mallory-pass-123")
    client.headers["Authorization"] = f"Token {server.seeded['key']}"
    yield client
    client.close()


def assert_refused(response):
    assert response.status_code == 403, response.text
    detail = response.json()["detail"]
    assert all(name in detail for name in NAMED), detail


def test_creating_a_verifiers_environment_over_the_api_is_refused(server, mallory):
    before = server.shell_json(STORED)
    response = mallory.post("/api/environments/", json={"name": "mine", "kind": "verifiers",
                                                        "verifiers_id": "vf-tiny", "params": {"size": 99}})
    assert_refused(response)
    assert "'vf-tiny'" in response.json()["detail"]
    assert server.shell_json(STORED) == before


def test_turning_a_builtin_environment_into_a_verifiers_one_is_refused(server, mallory):
    before = server.shell_json(STORED)
    response = mallory.patch(f"/api/environments/{server.seeded['calc']}/",
                             json={"kind": "verifiers", "verifiers_id": "vf-tiny"})
    assert_refused(response)
    assert server.shell_json(STORED) == before


def test_creating_a_verifiers_environment_on_the_page_is_refused(server, mallory):
    before = server.shell_json(STORED)
    del mallory.headers["Authorization"]  # the page, as a browser: session and CSRF token
    response = mallory.post("/environments/new/verifiers/", data={
        "name": "mine", "verifiers_id": "vf-tiny", "params_json": '{"size": 99}',
        "csrfmiddlewaretoken": mallory.cookies["csrftoken"]}, headers={"Referer": server.url + "/"})
    assert response.status_code == 403
    html = response.text.replace("&#x27;", "'")
    assert all(name in html for name in NAMED)
    assert server.shell_json(STORED) == before


@pytest.mark.parametrize("run", ["on_environment", "on_rows"])
def test_a_run_on_a_verifiers_environment_saved_before_the_rule_does_not_start(server, mallory, run):
    before = server.shell_json(STORED)
    response = mallory.post(f"/api/runs/{server.seeded[run]}/start/")
    assert_refused(response)
    assert f"run {server.seeded[run]} cannot start" in response.json()["detail"]
    assert server.shell_json(STORED) == before  # still created: no token issued, nothing queued


@pytest.mark.parametrize("on", ["environment", "dataset"])
def test_creating_a_run_on_a_verifiers_environment_is_refused(server, mallory, on):
    before = server.shell_json(STORED)
    legacy = server.shell_json("import json; from runs.models import Environment; "
                               "e = Environment.objects.get(name='legacy'); "
                               "print(json.dumps({'environment': e.pk, 'dataset': e.dataset_id}))")
    body = {"name": "sneaky", "dataset": legacy["dataset"], "rewards": [{"reward_function": server.seeded["reward"]}]}
    if on == "environment":
        body["environment"] = legacy["environment"]
    response = mallory.post("/api/runs/", json=body)
    assert_refused(response)
    assert server.shell_json(STORED) == before
