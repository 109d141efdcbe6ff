"""The reward admin: a judge's params checked, its API key set or cleared through a field that
never shows it, and the page saying only whether one is set."""
import json

import pytest
from django.contrib.auth import get_user_model

from runs.rewards.models.function import RewardFunction
from runs.rewards.secrets import seal_api_key, unseal_api_key
from tests.support.admin_forms import posted_as_shown

KEY = "sk-admin-judge-key-0123456789"
URL_JUDGE = {"template": "Rate {completion}.", "endpoint": "url", "base_url": "https://api.example.org/v1",
             "model": "gpt-4o-mini"}


@pytest.fixture
def admin_client(client, db):
    client.force_login(get_user_model().objects.create_superuser("root", password="root-pass-123"))
    return client


@pytest.fixture
def url_judge(owner):
    return RewardFunction.objects.create(owner=owner, name="judge", kind="judge", params=URL_JUDGE,
                                         api_key_sealed=seal_api_key(KEY))


def change(client, reward, **fields):
    url = f"/admin/runs/rewardfunction/{reward.pk}/change/"
    # The params as typed in the page's JSON box (posted_as_shown would send its JSON encoded twice).
    return client.post(url, {**posted_as_shown(client.get(url)), "params": json.dumps(reward.params), **fields})


def test_the_page_says_a_key_is_set_and_never_shows_it(admin_client, url_judge):
    html = admin_client.get(f"/admin/runs/rewardfunction/{url_judge.pk}/change/").content.decode()
    assert 'name="api_key"' in html and 'type="password"' in html
    assert KEY not in html and url_judge.api_key_sealed not in html
    listing = admin_client.get("/admin/runs/rewardfunction/").content.decode()
    assert "not set" not in listing and ">set<" in listing and KEY not in listing


def test_saving_other_fields_keeps_the_key(admin_client, url_judge):
    assert change(admin_client, url_judge, description="stricter").status_code == 302
    assert unseal_api_key(RewardFunction.objects.get(pk=url_judge.pk).api_key_sealed) == KEY


def test_a_typed_key_is_stored_sealed_and_clear_removes_it(admin_client, url_judge):
    assert change(admin_client, url_judge, api_key="sk-new-admin-key-42").status_code == 302
    sealed = RewardFunction.objects.get(pk=url_judge.pk).api_key_sealed
    assert "sk-new-admin-key-42" not in sealed and unseal_api_key(sealed) == "sk-new-admin-key-42"
    assert change(admin_client, url_judge, clear_api_key="on").status_code == 302
    assert RewardFunction.objects.get(pk=url_judge.pk).api_key_sealed == ""


def test_bad_judge_params_are_refused_naming_the_field(admin_client, url_judge):
    response = change(admin_client, url_judge, params=json.dumps({**URL_JUDGE, "base_url": ""}))
    assert response.status_code == 200 and "base_url" in response.content.decode()
    assert RewardFunction.objects.get(pk=url_judge.pk).params == URL_JUDGE


def test_a_key_for_a_served_judge_is_refused(admin_client, url_judge):
    served = {"template": "Rate {completion}.", "model": "Qwen/Qwen2.5-0.5B-Instruct"}
    response = change(admin_client, url_judge, params=json.dumps(served), api_key="sk-x-0123456789")
    assert response.status_code == 200 and "endpoint" in response.content.decode()
    assert change(admin_client, url_judge, params=json.dumps(served)).status_code == 302
    assert RewardFunction.objects.get(pk=url_judge.pk).api_key_sealed == ""  # no unused key kept

