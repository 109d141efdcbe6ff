"""Attack: the owner saves an endpoint judge with its API key for host A; a staff account (which may
change everyone's rewards) points its base_url at host B, a collector of its own, keeping the key,
and the next run's worker sends the owner's key to B. Now a key belongs to the base_url it was given
for: changing base_url (through the API, the judge's page or the admin) forgets it, unless the same
change gives a new key. The API then says api_key_set false, the sealed field is empty, and the run's
secrets endpoint hands its worker no key for that judge; a change to anything else keeps the key."""
import json

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.test import Client

from runs.rewards.models.function import RewardFunction
from runs.training_runs.models import Run, RunReward
from runs.rewards.secrets import unseal_api_key
from tests.support.admin_forms import posted_as_shown

OWNERS_KEY = "sk-owners-own-key-0123456789abcdef"
HOST_A = "https://api.example.org/v1"
HOST_B = "https://collector.example.net/v1"
JUDGE = {"template": "Rate {completion} for {prompt}.", "endpoint": "url", "base_url": HOST_A, "model": "gpt-4o-mini"}


@pytest.fixture
def judge(owner_api) -> RewardFunction:
    answer = owner_api.post("/api/reward-functions/", {"name": "strict", "kind": "judge", "params": JUDGE,
                                                       "api_key": OWNERS_KEY}, format="json")
    assert answer.status_code == 201 and answer.json()["api_key_set"] is True, answer.content
    return RewardFunction.objects.get(pk=answer.json()["id"])


@pytest.fixture
def staff_admin(db) -> Client:
    """Staff who may change every reward in the admin."""
    user = get_user_model().objects.create_user("staffer", password="staffer-pass-123", is_staff=True)
    user.user_permissions.set(Permission.objects.filter(
        content_type__app_label="runs", codename__in=["change_rewardfunction", "view_rewardfunction"]))
    client = Client()
    client.force_login(user)
    return client


def patch(api, judge, **body):
    return api.patch(f"/api/reward-functions/{judge.pk}/", body, format="json")


def sealed(judge) -> str:
    return RewardFunction.objects.get(pk=judge.pk).api_key_sealed


def keys_a_run_is_given(client, owner, dataset, config, judge) -> dict:
    """What the worker of a run naming the judge fetches with the run's own token."""
    run = Run.objects.create(owner=owner, name="judged", dataset=dataset, config=dict(config.values), attempt=1)
    RunReward.objects.create(run=run, reward_function=judge)
    run.enqueue()
    token = run.issue_ingest_token()
    run.save()
    answer = client.get(f"/api/runs/{run.pk}/secrets/", HTTP_AUTHORIZATION=f"Bearer {token}")
    assert answer.status_code == 200, answer.content
    return answer.json()["api_keys"]


def test_staff_moving_the_judge_through_the_api_forgets_the_key(
        staff_api, anon_api, judge, owner, dataset, config):
    answer = patch(staff_api, judge, params={**JUDGE, "base_url": HOST_B})
    assert answer.status_code == 200, answer.content
    assert answer.json()["params"]["base_url"] == HOST_B and answer.json()["api_key_set"] is False
    assert sealed(judge) == ""
    assert keys_a_run_is_given(anon_api, owner, dataset, config, judge) == {}


def test_staff_moving_the_judge_through_its_page_forgets_the_key(staff_user, judge):
    page = Client()
    page.force_login(staff_user)
    answer = page.post(f"/rewards/{judge.pk}/", {
        "name": "strict", "p-template": JUDGE["template"], "p-mode": "score", "p-endpoint": "url",
        "p-model": JUDGE["model"], "p-base_url": HOST_B, "p-constrained": "on"})
    assert answer.status_code == 302, answer.content.decode()[-2000:]
    assert RewardFunction.objects.get(pk=judge.pk).params["base_url"] == HOST_B
    assert sealed(judge) == ""


def test_staff_moving_the_judge_through_the_admin_forgets_the_key(staff_admin, judge):
    url = f"/admin/runs/rewardfunction/{judge.pk}/change/"
    moved = {**RewardFunction.objects.get(pk=judge.pk).params, "base_url": HOST_B}
    answer = staff_admin.post(url, {**posted_as_shown(staff_admin.get(url)), "params": json.dumps(moved)})
    assert answer.status_code == 302, answer.content.decode()[-2000:]
    assert RewardFunction.objects.get(pk=judge.pk).params["base_url"] == HOST_B
    assert sealed(judge) == ""


def test_a_move_that_brings_its_own_key_keeps_that_key(staff_api, judge):
    answer = patch(staff_api, judge, params={**JUDGE, "base_url": HOST_B}, api_key="sk-key-for-host-b")
    assert answer.status_code == 200 and answer.json()["api_key_set"] is True, answer.content
    assert unseal_api_key(sealed(judge)) == "sk-key-for-host-b"


def test_changing_anything_but_the_endpoint_keeps_the_key(staff_api, anon_api, judge, owner, dataset, config):
    answer = patch(staff_api, judge, description="stricter", params={**JUDGE, "temperature": 0.5})
    assert answer.status_code == 200 and answer.json()["api_key_set"] is True, answer.content
    assert unseal_api_key(sealed(judge)) == OWNERS_KEY
    assert keys_a_run_is_given(anon_api, owner, dataset, config, judge) == {"strict": OWNERS_KEY}
