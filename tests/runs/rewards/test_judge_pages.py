"""Judge and reward model pages, server side: forms from their schemas, errors per field, and the
API key written once and never rendered back."""
import pytest
from django.test import Client

from runs.rewards.models.function import RewardFunction
from runs.rewards.secrets import unseal_api_key

KEY = "sk-test-0123456789abcdef-secret"
TEMPLATE = "Question: {prompt}\nAnswer: {completion}\nExpected: {answer}\nScore 0-10:"


@pytest.fixture
def browser_client(owner):
    client = Client()
    client.force_login(owner)
    return client


def judge_form(**changes) -> dict:
    form = {"name": "rubric", "p-template": TEMPLATE, "p-mode": "score", "p-endpoint": "url",
            "p-model": "gpt-judge", "p-base_url": "https://judge.example/v1", "p-constrained": "on",
            "p-limits.max_concurrency": "4", "p-input_cost_per_million": "0.15", "api_key": KEY}
    return {key: value for key, value in {**form, **changes}.items() if value is not None}


def test_the_judge_form_offers_its_fields_with_defaults_and_the_placeholders(browser_client):
    page = browser_client.get("/rewards/new/judge/").content.decode()
    assert '<option value="rank">' in page and '<option value="url">' in page
    assert 'name="p-limits.timeout_s" value="60"' in page and 'name="p-scale_max" value="10"' in page
    assert "{completions} (rank: the group" in page and "{prompt}" in page
    assert 'name="api_key" type="password"' in page and "A key is set" not in page


def test_a_judge_created_from_the_form_keeps_its_key_sealed_and_never_shows_it(browser_client, owner):
    response = browser_client.post("/rewards/new/judge/", judge_form())
    reward = RewardFunction.objects.get(name="rubric")
    assert response.status_code == 302, response.content.decode()[-2000:]
    assert reward.kind == "judge" and reward.params["limits"]["max_concurrency"] == 4
    assert reward.params["input_cost_per_million"] == 0.15 and reward.params["base_url"] == "https://judge.example/v1"
    assert KEY not in reward.api_key_sealed and unseal_api_key(reward.api_key_sealed) == KEY
    page = browser_client.get(f"/rewards/{reward.pk}/").content.decode()
    assert "A key is set" in page and 'name="api_key_clear"' in page
    assert KEY not in page and reward.api_key_sealed not in page


def test_saving_without_typing_a_key_keeps_it_and_the_clear_box_clears_it(browser_client, owner):
    browser_client.post("/rewards/new/judge/", judge_form())
    reward = RewardFunction.objects.get(name="rubric")
    sealed = reward.api_key_sealed
    kept = browser_client.post(f"/rewards/{reward.pk}/", judge_form(api_key="", **{"p-temperature": "0.5"}))
    assert kept.status_code == 302
    reward.refresh_from_db()
    assert reward.api_key_sealed == sealed and reward.params["temperature"] == 0.5
    assert browser_client.post(f"/rewards/{reward.pk}/", judge_form(api_key="", api_key_clear="on")).status_code == 302
    reward.refresh_from_db()
    assert reward.api_key_sealed == ""
    assert "A key is set" not in browser_client.get(f"/rewards/{reward.pk}/").content.decode()


def test_a_refused_judge_form_shows_each_error_under_its_field_and_not_the_typed_key(browser_client):
    response = browser_client.post("/rewards/new/judge/", judge_form(**{
        "p-template": "Rate {prompt} please", "p-limits.timeout_s": "soon", "p-labels": "yes = 1\nno"}))
    page = response.content.decode()
    assert response.status_code == 400 and not RewardFunction.objects.filter(name="rubric").exists()
    assert "limits.timeout_s: &#x27;soon&#x27; is not a number" in page
    assert "labels: line 2 (&#x27;no&#x27;): write each label as" in page
    assert KEY not in page and "The key you typed was not saved" in page
    # Once the inputs parse, the schema's own refusal is shown by the field it names.
    page = browser_client.post("/rewards/new/judge/", judge_form(**{"p-template": "Rate {prompt} please"}))
    page = page.content.decode()
    assert "template: a score judge must see the answer: write {completion} in it" in page


def test_a_choice_judges_labels_are_read_a_line_each(browser_client):
    response = browser_client.post("/rewards/new/judge/", judge_form(**{
        "p-mode": "choice", "p-labels": "correct = 1\npartly = 0.5\nwrong = 0\n"}))
    assert response.status_code == 302
    reward = RewardFunction.objects.get(name="rubric")
    assert reward.params["labels"] == {"correct": 1.0, "partly": 0.5, "wrong": 0.0}
    assert "partly = 0.5" in browser_client.get(f"/rewards/{reward.pk}/").content.decode()


def test_a_key_for_a_served_judge_is_refused_by_the_api_key_field(browser_client):
    response = browser_client.post("/rewards/new/judge/", judge_form(**{"p-endpoint": "served", "p-base_url": "",
                                                                         "p-model": "smollm2-135m-instruct"}))
    assert response.status_code == 400
    assert "api_key: only a judge with params.endpoint &#x27;url&#x27; is sent an API key" in response.content.decode()


def test_a_reward_model_is_created_from_its_form_and_listed(browser_client):
    response = browser_client.post("/rewards/new/reward-model/", {
        "name": "rm", "p-model": "my-reward-model", "p-batch_size": "4", "p-sigmoid": "on"})
    reward = RewardFunction.objects.get(name="rm")
    assert response.status_code == 302, response.content.decode()[-2000:]
    assert reward.kind == "reward_model" and reward.params["batch_size"] == 4 and reward.params["sigmoid"] is True
    assert reward.params["chat_template"] is False  # an unchecked box is False, as a built-in's
    listing = browser_client.get("/rewards/").content.decode()
    assert "reward model my-reward-model" in listing and "/rewards/new/judge/" in listing
