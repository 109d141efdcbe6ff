"""Reward functions: built-ins with checked parameters, and Python code checked before it is saved."""
import pytest

from runs.training_runs.models import RunReward
from runs.rewards.models.function import RewardFunction
from tests.support.reward_authors import grant_reward_authoring


@pytest.fixture(autouse=True)
def owner_may_author_code(owner):
    # Code rewards need their own permission (tests/runs/accounts/test_api_reward_permission.py).
    grant_reward_authoring(owner)


GOOD_CODE = '''
import re

def reward(prompts, completions, answer=(), **columns):
    return [1.0 if a in c else 0.0 for c, a in zip(completions, answer)]
'''


def create(client, **body):
    return client.post("/api/reward-functions/", {"name": "r", **body}, format="json")


def test_a_builtin_gets_its_parameter_defaults(owner_api):
    response = create(owner_api, kind="builtin", builtin="exact_match", params={"column": "label"})
    assert response.status_code == 201, response.content
    assert response.json()["params"] == {"column": "label", "strip": True, "case_sensitive": False}


def test_a_builtin_without_params_gets_all_defaults(owner_api):
    response = create(owner_api, kind="builtin", builtin="length")
    assert response.status_code == 201, response.content
    assert response.json()["params"] == {"min_tokens": 0, "max_tokens": 256, "soft_penalty_tokens": 64}


def test_an_unknown_builtin_is_refused_with_the_choices(owner_api):
    response = create(owner_api, kind="builtin", builtin="vibes")
    assert response.status_code == 400
    message = str(response.json()["builtin"])
    assert "'vibes'" in message and "accuracy" in message


@pytest.mark.parametrize("params,named", [
    ({"max_tokens": 0}, "max_tokens"), ({"colour": "red"}, "colour"), ({"ngram": "three"}, "ngram"),
])
def test_bad_builtin_params_are_refused_naming_the_parameter(owner_api, params, named):
    response = create(owner_api, kind="builtin", builtin="length" if named != "ngram" else "repetition", params=params)
    assert response.status_code == 400
    assert named in str(response.json()["params"])


def test_builtin_params_that_are_not_an_object_are_refused(owner_api):
    response = create(owner_api, kind="builtin", builtin="length", params=[1, 2])
    assert response.status_code == 400
    assert "params" in response.json()


def test_valid_code_is_stored(owner_api):
    response = create(owner_api, kind="code", source=GOOD_CODE)
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["source"] == GOOD_CODE and body["builtin"] == "" and body["params"] == {}


def test_a_syntax_error_names_its_line(owner_api):
    response = create(owner_api, kind="code", source="def reward(prompts, completions, **columns):\n    return [\n")
    assert response.status_code == 400
    message = str(response.json()["source"])
    assert "line 2" in message or "line 3" in message
    assert "syntax" in message


def test_error_lines_count_the_leading_blank_lines_as_typed(owner_api):
    response = create(owner_api, kind="code", source="\n\n\ndef reward(prompts, completions, **columns)\n    pass\n")
    assert response.status_code == 400
    assert "line 4" in str(response.json()["source"])


def test_code_without_a_reward_function_is_refused(owner_api):
    response = create(owner_api, kind="code", source="def score(prompts, completions, **columns):\n    return []\n")
    assert response.status_code == 400
    assert "'reward'" in str(response.json()["source"])


@pytest.mark.parametrize("signature,problem", [
    ("def reward(completions, prompts, **columns)", "(prompts, completions)"),
    ("def reward(prompts, completions)", "**columns"),
    ("def reward(prompts, completions, answer=None, **columns)", None),
    ("def reward(prompts, completions, **kw)", None),
])
def test_a_wrong_signature_says_what_to_change(owner_api, signature, problem):
    response = create(owner_api, kind="code", source=f"{signature}:\n    return []\n")
    if problem is None:
        assert response.status_code == 201, response.content
        return
    assert response.status_code == 400
    message = str(response.json()["source"])
    assert problem in message and "line 1" in message


@pytest.mark.parametrize("source", ["", "   \n\n"])
def test_empty_code_is_refused(owner_api, source):
    response = create(owner_api, kind="code", source=source)
    assert response.status_code == 400
    assert "empty" in str(response.json()["source"])


def test_code_without_a_source_field_is_refused(owner_api):
    response = create(owner_api, kind="code")
    assert response.status_code == 400
    assert "empty" in str(response.json()["source"])


def test_switching_a_builtin_to_code_drops_its_builtin_settings(owner_api, reward):
    response = owner_api.patch(f"/api/reward-functions/{reward.pk}/", {"kind": "code", "source": GOOD_CODE},
                               format="json")
    assert response.status_code == 200, response.content
    reward.refresh_from_db()
    assert (reward.kind, reward.builtin, reward.params) == ("code", "", {})


def test_editing_code_is_checked_again(owner_api):
    created = create(owner_api, kind="code", source=GOOD_CODE).json()
    response = owner_api.patch(f"/api/reward-functions/{created['id']}/", {"source": "def reward(:\n"}, format="json")
    assert response.status_code == 400
    assert RewardFunction.objects.get(pk=created["id"]).source == GOOD_CODE


def test_a_duplicate_name_is_refused(owner_api, reward):
    response = create(owner_api, name=reward.name, kind="builtin", builtin="length")
    assert response.status_code == 400 and "name" in response.json()


def test_deleting_a_reward_used_by_a_run_is_refused_with_a_reason(owner_api, run, reward):
    response = owner_api.delete(f"/api/reward-functions/{reward.pk}/")
    assert response.status_code == 409
    assert run.name in response.json()["detail"]
    assert RewardFunction.objects.filter(pk=reward.pk).exists()


def test_a_reward_held_by_a_run_being_deleted_is_a_409_not_a_crash(run, reward):
    """The race schemathesis found: the holding RunReward outlives its run for a moment."""
    from django.db.models import ProtectedError

    from runs.web.errors import exception_handler

    orphan = RunReward(run_id=run.pk + 1000, reward_function=reward)
    response = exception_handler(ProtectedError("held", [orphan]), {})
    assert response.status_code == 409 and "being deleted" in response.data["detail"]


@pytest.mark.parametrize("source", ["x = " + "-" * 20000 + "1", "x = " + "+".join(["1"] * 20000)])
def test_code_too_deeply_nested_to_parse_is_a_400_not_a_crash(owner_api, source):
    response = create(owner_api, kind="code", source=source)
    assert response.status_code == 400
    assert "nested" in str(response.json()["source"])


def test_code_with_a_null_byte_is_refused(owner_api):
    response = create(owner_api, kind="code", source="def reward(prompts, completions, **c):\n    return '\x00'\n")
    assert response.status_code == 400
    assert "null" in str(response.json()["source"]).lower()
