"""Reward pages, server side: list, built-in form from the catalog, code form, permission, delete."""
import pytest
from django.test import Client

from runs.rewards.models.function import RewardFunction
from tests.support.reward_authors import grant_reward_authoring

CODE = "def reward(prompts, completions, **columns):\n    return [1.0] * len(completions)\n"


@pytest.fixture
def browser_client(owner):
    client = Client()
    client.force_login(owner)
    return client


@pytest.fixture
def author(owner):
    return grant_reward_authoring(owner)


def test_the_empty_list_says_what_to_do(browser_client):
    page = browser_client.get("/rewards/").content.decode()
    assert "No reward functions yet" in page and "/rewards/new/builtin/" in page


def test_the_list_shows_only_visible_rewards(browser_client, reward, other_user):
    RewardFunction.objects.create(owner=other_user, name="theirs", kind="builtin", builtin="length")
    page = browser_client.get("/rewards/").content.decode()
    assert ">acc<" in page and "theirs" not in page


def test_the_builtin_form_is_generated_from_the_catalog_with_defaults_and_help(browser_client):
    page = browser_client.get("/rewards/new/builtin/?builtin=length").content.decode()
    assert 'name="length-max_tokens" value="256"' in page
    assert "Width of the linear fall-off past max_tokens." in page
    assert 'name="format-tags"' in page and "comma-separated" in page
    assert '<option value="length" selected>' in page


def test_creating_a_builtin_from_the_form(browser_client, owner):
    response = browser_client.post("/rewards/new/builtin/", {
        "name": "short", "builtin": "length", "length-min_tokens": "5", "length-max_tokens": "50",
        "length-soft_penalty_tokens": "10"})
    reward = RewardFunction.objects.get(name="short")
    assert response.status_code == 302 and response["Location"] == f"/rewards/{reward.pk}/"
    assert reward.params == {"min_tokens": 5, "max_tokens": 50, "soft_penalty_tokens": 10}


def test_format_tags_checkbox_and_optional_regex_from_the_form(browser_client):
    browser_client.post("/rewards/new/builtin/", {"name": "fmt", "builtin": "format", "format-regex": "",
                                                  "format-tags": "think, answer", "format-partial_credit": "on"})
    assert RewardFunction.objects.get(name="fmt").params == {"regex": None, "tags": ["think", "answer"],
                                                             "partial_credit": True}


@pytest.mark.parametrize(("field", "value", "says"), [
    ("length-max_tokens", "lots", "'lots' is not an integer"),
    ("length-max_tokens", "0", "greater than or equal to 1"),
])
def test_bad_parameters_are_inline_errors_naming_the_parameter(browser_client, field, value, says):
    response = browser_client.post("/rewards/new/builtin/", {
        "name": "x", "builtin": "length", "length-min_tokens": "0", "length-max_tokens": "256",
        "length-soft_penalty_tokens": "64", field: value})
    assert response.status_code == 400
    page = response.content.decode()
    error = page.replace("&#x27;", "'").split('<p class="error">max_tokens: ', 1)[1].split("</p>")[0]
    assert says in error and 'aria-invalid="true"' in page
    assert not RewardFunction.objects.filter(name="x").exists()


def test_an_empty_parameter_takes_its_default(browser_client):
    browser_client.post("/rewards/new/builtin/", {"name": "x", "builtin": "length", "length-max_tokens": ""})
    assert RewardFunction.objects.get(name="x").params["max_tokens"] == 256


def test_a_duplicate_name_is_an_inline_error(browser_client, reward):
    response = browser_client.post("/rewards/new/builtin/", {"name": reward.name, "builtin": "length",
                                                             "length-max_tokens": "9"})
    assert response.status_code == 400 and "reward-name-error" in response.content.decode()


def test_an_author_creates_code_and_errors_point_at_the_line(browser_client, author):
    response = browser_client.post("/rewards/new/code/",
                                   {"name": "c", "source": "\n\ndef reward(prompts):\n  return []\n"})
    assert response.status_code == 400
    page = response.content.decode()
    assert "line 3: the first two parameters must be (prompts, completions)" in page
    assert '"errorLines": [3]' in page
    response = browser_client.post("/rewards/new/code/", {"name": "c", "source": CODE})
    assert response.status_code == 302 and RewardFunction.objects.get(name="c").source == CODE


def test_the_code_page_loads_the_vendored_editor(browser_client, author):
    page = browser_client.get("/rewards/new/code/").content.decode()
    assert "vendor/codemirror-5.65.21/lib/codemirror.js" in page and "mode/python/python.js" in page
    assert "def reward(prompts, completions, **columns):" in page


def test_without_the_permission_the_list_disables_code_and_says_why(browser_client):
    page = browser_client.get("/rewards/").content.decode()
    assert 'aria-disabled="true"' in page and "Reward authors" in page
    assert 'href="/rewards/new/code/"' not in page


def test_without_the_permission_the_code_page_has_no_save_and_posting_is_403(browser_client, owner):
    page = browser_client.get("/rewards/new/code/").content.decode()
    assert "reward-save" not in page and '"readOnly": true' in page and "Reward authors" in page
    response = browser_client.post("/rewards/new/code/", {"name": "c", "source": CODE})
    assert response.status_code == 403 and not RewardFunction.objects.filter(name="c").exists()


def test_without_the_permission_an_own_code_reward_is_read_only_but_dry_runnable(browser_client, owner):
    mine = RewardFunction.objects.create(owner=owner, name="mine", kind="code", source=CODE)
    page = browser_client.get(f"/rewards/{mine.pk}/").content.decode()
    assert "You can dry-run this reward" in page and 'id="dry-run"' in page and "reward-save" not in page
    response = browser_client.post(f"/rewards/{mine.pk}/", {"name": "mine", "source": "def reward(:"})
    assert response.status_code == 403
    mine.refresh_from_db()
    assert mine.source == CODE


def test_others_rewards_are_404(browser_client, other_user):
    theirs = RewardFunction.objects.create(owner=other_user, name="theirs", kind="builtin", builtin="length")
    assert browser_client.get(f"/rewards/{theirs.pk}/").status_code == 404
    assert browser_client.post(f"/rewards/{theirs.pk}/delete/").status_code == 404


def test_deleting_a_reward_used_by_a_run_is_refused_with_a_message(browser_client, run, reward):
    response = browser_client.post(f"/rewards/{reward.pk}/delete/", follow=True)
    assert RewardFunction.objects.filter(pk=reward.pk).exists()
    assert "cannot be deleted" in response.content.decode() and run.name in response.content.decode()


def test_deleting_an_unused_reward(browser_client, reward):
    response = browser_client.post(f"/rewards/{reward.pk}/delete/")
    assert response.status_code == 302 and not RewardFunction.objects.filter(pk=reward.pk).exists()


def test_rows_for_typing_completions(browser_client, dataset, other_user, library_for):
    body = browser_client.get(f"/rewards/rows/?dataset={dataset.pk}&rows=2").json()
    assert [row["columns"] for row in body["rows"]] == [{"answer": "#### 6"}, {"answer": "#### -2"}]
    theirs = library_for(other_user, "theirs")["dataset"]
    assert browser_client.get(f"/rewards/rows/?dataset={theirs.pk}&rows=2").status_code == 404
    assert browser_client.get("/rewards/rows/?dataset=x").status_code == 400
