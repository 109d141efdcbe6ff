"""A JSON body's values keep their JSON types: `true` is not the text "True", "1" is not the number 1,
`1` is not true. Each is a 400 naming the field, as the schema's types say; a form sends text, as before."""
import pytest

from runs.environments.models.environment import Environment, EnvironmentReward
from tests.support.telemetry import add_checkpoint


@pytest.fixture
def checkpoint(run):
    return add_checkpoint(run, 10, "/nowhere/step-10")


@pytest.mark.parametrize("field, value", [("name", True), ("hub_id", 5), ("split", False), ("prompt_column", 1.5)])
def test_a_dataset_with_a_non_text_value_for_text_is_a_400_naming_the_field(owner_api, field, value):
    body = {"name": "d2", "source": "hub", "hub_id": "openai/gsm8k", field: value}
    response = owner_api.post("/api/datasets/", body, format="json")
    assert response.status_code == 400 and list(response.json()) == [field], response.content


def test_a_boolean_for_text_says_what_the_field_takes(owner_api):
    response = owner_api.post("/api/configs/", {"name": "c2", "description": True}, format="json")
    assert response.json() == {"description": ["must be text (a JSON string), not a boolean"]}


def test_a_number_sent_as_text_is_a_400_naming_the_field(owner_api, reward, dataset):
    response = owner_api.post(f"/api/reward-functions/{reward.pk}/dry-run/",
                              {"dataset": dataset.pk, "completions": ["4"], "rows": "1"}, format="json")
    assert response.json() == {"rows": ["must be an integer, not text"]}, response.content


def test_an_id_sent_as_text_is_a_400_naming_the_field(owner_api, dataset, reward):
    response = owner_api.post("/api/runs/", {"name": "r2", "dataset": str(dataset.pk),
                                             "rewards": [{"reward_function": reward.pk}]}, format="json")
    assert response.json() == {"dataset": ["must be an id (an integer), not text"]}, response.content


def test_a_weight_sent_as_text_is_named_in_its_entry(owner_api, dataset, reward):
    response = owner_api.post("/api/runs/", {"name": "r2", "dataset": dataset.pk,
                                             "rewards": [{"reward_function": reward.pk, "weight": "2"}]}, format="json")
    assert response.json() == {"rewards": {"0": {"weight": ["must be a number, not text"]}}}, response.content


def test_a_number_for_a_boolean_is_a_400_naming_the_field(owner_api, run, checkpoint):
    response = owner_api.post(f"/api/runs/{run.pk}/checkpoints/{checkpoint.pk}/push/",
                              {"repo_id": "tester/model", "token": "hf_x", "private": 1}, format="json")
    assert response.json() == {"private": ["must be a boolean, not a number"]}, response.content


def test_a_number_for_text_in_a_verbs_body_is_a_400_naming_the_field(owner_api, run):
    response = owner_api.post(f"/api/runs/{run.pk}/clone/", {"name": 5}, format="json")
    assert response.json() == {"name": ["must be text (a JSON string), not a number"]}, response.content


def test_each_item_of_a_list_keeps_its_type(owner_api, owner, dataset, reward):
    environment = Environment.objects.create(owner=owner, dataset=dataset, name="calc", kind="builtin",
                                             builtin="calculator", params={})
    EnvironmentReward.objects.create(environment=environment, reward_function=reward, weight=1.0)
    response = owner_api.post(f"/api/environments/{environment.pk}/dry-run/", {"turns": ["4", 4]}, format="json")
    assert response.status_code == 400 and list(response.json()) == ["turns"], response.content


def test_a_null_is_left_to_the_field(owner_api, dataset, reward):
    response = owner_api.post("/api/runs/", {"name": "r2", "dataset": dataset.pk, "eval_dataset": None,
                                             "rewards": [{"reward_function": reward.pk}]}, format="json")
    assert response.status_code == 201, response.content


def test_a_form_still_sends_numbers_as_text(owner_api, dataset):
    """A multipart upload's fields are text on the wire: the types are JSON's only in JSON."""
    response = owner_api.post("/api/datasets/", {"name": "5", "source": "hub", "hub_id": "openai/gsm8k"},
                              format="multipart")
    assert response.status_code == 201, response.content
