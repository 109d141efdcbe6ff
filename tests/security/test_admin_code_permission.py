"""Attack: a staff user without the code authors' permission writes code, or loads a verifiers
environment, through the admin. Its pages show those fields read-only; each test here POSTs what
the page would send with one field crafted in, and the admin refuses the whole save with the reason
(naming the permission) while what was stored stays as it was."""
import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission

from runs.datasets.models import Dataset
from runs.environments.models.environment import Environment
from runs.rewards.models.function import RewardFunction
from runs.training_runs.models import Run
from tests.support.admin_forms import posted_as_shown

CODE = "def reward(prompts, completions, **columns):\n    return [1.0] * len(completions)\n"
ENV_CODE = "def step(messages, row):\n    return None\n"
PERMISSION = "runs.author_reward_code"


@pytest.fixture
def staff(client, db):
    """Staff who may add and change everything in the library and runs, but not author code."""
    user = get_user_model().objects.create_user("staffer", password="staffer-pass-123", is_staff=True)
    models = ("rewardfunction", "environment", "environmentreward", "dataset", "run", "runreward")
    user.user_permissions.set(Permission.objects.filter(
        content_type__app_label="runs", codename__in=[f"{verb}_{m}" for verb in ("add", "change", "view")
                                                      for m in models]))
    assert not user.has_perm(PERMISSION)
    client.force_login(user)
    return client


@pytest.fixture
def code_reward(owner):
    return RewardFunction.objects.create(owner=owner, name="mine", kind="code", source=CODE)


@pytest.fixture
def calculator(owner, dataset, reward):
    environment = Environment.objects.create(owner=owner, name="calc", kind="builtin", builtin="calculator",
                                             dataset=dataset)
    environment.environment_rewards.create(reward_function=reward, weight=1.0)
    return environment


def crafted(client, url: str, **fields):
    """POSTs the admin page at `url` as shown, with `fields` changed."""
    return client.post(url, {**posted_as_shown(client.get(url)), **fields})


def refused(response) -> str:
    assert response.status_code == 200, response.status_code  # the form again, not a redirect
    html = response.content.decode().replace("&#x27;", "'")
    assert "Please correct the error" in html and PERMISSION in html
    return html


def stored(obj, *fields) -> tuple:
    obj = type(obj).objects.get(pk=obj.pk)
    return tuple(getattr(obj, field) for field in fields)


def test_a_builtin_reward_cannot_be_turned_into_code(staff, reward):
    before = stored(reward, "kind", "source", "updated_at")
    refused(crafted(staff, f"/admin/runs/rewardfunction/{reward.pk}/change/", kind="code", source=CODE))
    assert stored(reward, "kind", "source", "updated_at") == before


def test_a_code_rewards_source_cannot_be_changed(staff, code_reward):
    before = stored(code_reward, "name", "source", "updated_at")
    refused(crafted(staff, f"/admin/runs/rewardfunction/{code_reward.pk}/change/", source=CODE + "import os\n"))
    assert stored(code_reward, "name", "source", "updated_at") == before


def test_a_code_reward_cannot_be_added(staff, owner):
    html = refused(crafted(staff, "/admin/runs/rewardfunction/add/", owner=owner.pk, name="sneaky", kind="code",
                           params="{}", source=CODE))
    assert "reward code" in html
    assert not RewardFunction.objects.filter(name="sneaky").exists()


@pytest.mark.parametrize("change", [{"kind": "code", "source": ENV_CODE},
                                    {"kind": "verifiers", "verifiers_id": "vf-tiny"}])
def test_a_builtin_environment_cannot_be_turned_into_code_or_verifiers(staff, calculator, change):
    before = stored(calculator, "kind", "source", "verifiers_id", "updated_at")
    refused(crafted(staff, f"/admin/runs/environment/{calculator.pk}/change/", **change))
    assert stored(calculator, "kind", "source", "verifiers_id", "updated_at") == before


def test_a_verifiers_environment_cannot_be_added(staff, owner):
    html = refused(crafted(staff, "/admin/runs/environment/add/", owner=owner.pk, name="sneaky", kind="verifiers",
                           verifiers_id="vf-tiny", params='{"size": 4}'))
    assert "VERIFIERS_ENVIRONMENTS_ALLOWED" in html
    assert not Environment.objects.filter(name="sneaky").exists()
    assert not Dataset.objects.filter(source="environment").exists()


def test_a_verifiers_environments_rows_cannot_be_added_as_a_dataset(staff, owner):
    html = refused(crafted(staff, "/admin/runs/dataset/add/", owner=owner.pk, name="sneaky", source="environment",
                           hub_id="vf-tiny", generator_params='{"size": 4}', prompt_column="prompt"))
    assert "VERIFIERS_ENVIRONMENTS_ALLOWED" in html
    assert not Dataset.objects.filter(name="sneaky").exists()


def test_a_run_cannot_be_pointed_at_a_verifiers_environment(staff, run, owner):
    environment = Environment.objects.create(owner=owner, name="vf", kind="verifiers", verifiers_id="vf-tiny")
    before = stored(run, "environment_id", "dataset_id", "updated_at")
    refused(crafted(staff, f"/admin/runs/run/{run.pk}/change/", environment=environment.pk,
                    dataset=environment.dataset_id))
    assert stored(run, "environment_id", "dataset_id", "updated_at") == before
    assert Run.objects.count() == 1
