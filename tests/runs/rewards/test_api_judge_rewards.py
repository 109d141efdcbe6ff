"""Judges and reward models in the reward API: parameters checked per field, models named not
pathed, and an endpoint's API key written once, stored encrypted and never answered."""
import pytest

from runs.rewards.models.function import RewardFunction
from runs.rewards.secrets import unseal_api_key

KEY = "sk-test-0123456789abcdefXYZ"
SCORE = {"template": "Rate {completion} for {prompt} against {answer}.", "model": "Qwen/Qwen2.5-0.5B-Instruct"}
URL_JUDGE = {**SCORE, "endpoint": "url", "base_url": "https://api.example.org/v1", "model": "gpt-4o-mini"}


def create(client, **body):
    return client.post("/api/reward-functions/", {"name": "judge", **body}, format="json")


def patch(client, pk, **body):
    return client.patch(f"/api/reward-functions/{pk}/", body, format="json")


def stored(pk) -> RewardFunction:
    return RewardFunction.objects.get(pk=pk)


def test_a_served_judge_is_stored_with_its_defaults_filled_in(owner_api):
    response = create(owner_api, kind="judge", params=SCORE)
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["params"]["mode"] == "score" and body["params"]["limits"]["max_concurrency"] == 8
    assert body["builtin"] == "" and body["source"] == "" and body["api_key_set"] is False
    assert "api_key" not in body


def test_a_reward_model_is_stored_with_its_defaults_filled_in(owner_api):
    response = create(owner_api, kind="reward_model", params={"model": "org/rm-small"})
    assert response.status_code == 201, response.content
    assert response.json()["params"] == {"model": "org/rm-small", "batch_size": 8, "max_length": 1024,
                                         "chat_template": True, "sigmoid": False, "offset": 0.0}


def test_judges_need_no_code_authoring_permission(other_api):
    # other_user has no "Reward authors" membership; a judge runs no user code.
    assert create(other_api, kind="judge", params=SCORE).status_code == 201


@pytest.mark.parametrize("kind,params,named", [
    ("judge", {**SCORE, "mode": "vibes"}, "mode"),
    ("judge", {**SCORE, "limits": {"max_concurrency": 0}}, "limits.max_concurrency"),
    ("judge", {**SCORE, "colour": "red"}, "colour"),
    ("judge", {"model": "m"}, "template"),
    ("judge", {**SCORE, "template": "Rate {prompt}."}, "{completion}"),
    ("judge", {**SCORE, "template": "Rate {completion"}, "template"),
    ("judge", {**SCORE, "mode": "choice", "labels": {"yes": 1.0}}, "labels"),
    ("reward_model", {"model": "org/rm", "batch_size": 0}, "batch_size"),
    ("reward_model", {}, "model"),
])
def test_bad_params_are_refused_naming_the_field(owner_api, kind, params, named):
    response = create(owner_api, kind=kind, params=params)
    assert response.status_code == 400, response.content
    assert named in str(response.json()["params"])


@pytest.mark.parametrize("kind,params", [
    ("judge", {**SCORE, "model": "/etc"}),
    ("judge", {**SCORE, "model": "../../var/runs/1/checkpoint-5"}),
    ("reward_model", {"model": "/tmp/someone-elses-weights"}),
])
def test_a_model_the_worker_loads_must_be_a_name_not_a_path(owner_api, kind, params):
    response = create(owner_api, kind=kind, params=params)
    assert response.status_code == 400, response.content
    [message] = response.json()["params"]
    assert message.startswith("model:") and "hub id" in message


def test_an_endpoint_judges_model_is_a_name_the_endpoint_knows_not_checked_as_a_path(owner_api):
    response = create(owner_api, kind="judge", params={**URL_JUDGE, "model": "accounts/lab/models/judge-7b"})
    assert response.status_code == 201, response.content


def test_an_endpoint_judge_without_base_url_is_refused(owner_api):
    response = create(owner_api, kind="judge", params={**SCORE, "endpoint": "url"})
    assert response.status_code == 400
    assert "base_url" in str(response.json()["params"])


def test_the_key_is_stored_encrypted_and_never_answered(owner_api):
    response = create(owner_api, kind="judge", params=URL_JUDGE, api_key=KEY)
    assert response.status_code == 201, response.content
    assert response.json()["api_key_set"] is True and KEY not in response.content.decode()
    reward = stored(response.json()["id"])
    assert reward.api_key_sealed and KEY not in reward.api_key_sealed
    assert unseal_api_key(reward.api_key_sealed) == KEY
    for answer in (owner_api.get(f"/api/reward-functions/{reward.pk}/"), owner_api.get("/api/reward-functions/")):
        assert KEY not in answer.content.decode() and reward.api_key_sealed not in answer.content.decode()


def test_changing_other_fields_keeps_the_key_and_an_empty_key_clears_it(owner_api):
    pk = create(owner_api, kind="judge", params=URL_JUDGE, api_key=KEY).json()["id"]
    response = patch(owner_api, pk, description="stricter", params={**URL_JUDGE, "temperature": 0.5})
    assert response.status_code == 200 and response.json()["api_key_set"] is True
    assert unseal_api_key(stored(pk).api_key_sealed) == KEY
    response = patch(owner_api, pk, api_key="")
    assert response.status_code == 200 and response.json()["api_key_set"] is False
    assert stored(pk).api_key_sealed == ""


def test_a_new_key_replaces_the_old(owner_api):
    pk = create(owner_api, kind="judge", params=URL_JUDGE, api_key=KEY).json()["id"]
    assert patch(owner_api, pk, api_key="sk-another-key-987654321").status_code == 200
    assert unseal_api_key(stored(pk).api_key_sealed) == "sk-another-key-987654321"


def test_a_key_for_a_reward_that_calls_no_endpoint_is_refused(owner_api):
    for kind, params in (("judge", SCORE), ("reward_model", {"model": "org/rm"}), ("builtin", None)):
        extra = {"builtin": "length"} if kind == "builtin" else {"params": params}
        response = create(owner_api, kind=kind, api_key=KEY, **extra)
        assert response.status_code == 400, (kind, response.content)
        assert "endpoint 'url'" in str(response.json()["api_key"])


def test_a_judge_moved_to_the_worker_drops_its_key(owner_api):
    pk = create(owner_api, kind="judge", params=URL_JUDGE, api_key=KEY).json()["id"]
    response = patch(owner_api, pk, params=SCORE)
    assert response.status_code == 200, response.content
    assert response.json()["api_key_set"] is False and stored(pk).api_key_sealed == ""


def test_a_builtin_turned_judge_needs_judge_params(owner_api, reward):
    response = patch(owner_api, reward.pk, kind="judge")
    assert response.status_code == 400 and "template" in str(response.json()["params"])
    response = patch(owner_api, reward.pk, kind="judge", params=SCORE)
    assert response.status_code == 200, response.content
    assert stored(reward.pk).builtin == ""


def test_the_key_is_not_a_plain_text_field_of_another_users_view(owner_api, staff_api):
    pk = create(owner_api, kind="judge", params=URL_JUDGE, api_key=KEY).json()["id"]
    answer = staff_api.get(f"/api/reward-functions/{pk}/")
    assert answer.status_code == 200 and answer.json()["api_key_set"] is True
    assert KEY not in answer.content.decode()


def test_the_schema_says_the_key_is_write_only(owner_api):
    schema = owner_api.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    answered = schema["components"]["schemas"]["RewardFunction"]["properties"]
    sent = schema["components"]["schemas"]["RewardFunctionRequest"]["properties"]
    assert "api_key" not in answered and answered["api_key_set"]["readOnly"] is True
    assert sent["api_key"]["writeOnly"] is True and "never answered" in sent["api_key"]["description"]
    assert "api_key_set" not in sent
