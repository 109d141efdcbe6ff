"""/api/environments/: built-ins with checked parameters, code checked before it is saved, verifiers
ids refused where the package is missing, a rubric and a dataset, owners apart, deletes refused
while runs use them."""
import pytest

from runs.environments.models.environment import Environment
from runs.training_runs.models import Run, RunReward
from tests.support.reward_authors import grant_reward_authoring

CODE = "def step(messages, row):\n    return None\n"


def create(client, dataset, reward, **body):
    payload = {"name": "env", "dataset": dataset.pk, "rubric": [{"reward_function": reward.pk, "weight": 2}], **body}
    return client.post("/api/environments/", payload, format="json")


def test_a_builtin_is_stored_with_its_parameter_defaults_and_rubric(owner_api, dataset, reward):
    response = create(owner_api, dataset, reward, kind="builtin", builtin="calculator", params={"cost_per_call": 0.1})
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["params"] == {"cost_per_call": 0.1, "max_result_chars": 200}
    assert body["rubric"] == [{"reward_function": reward.pk, "name": "acc", "weight": 2.0}]
    assert body["dataset"] == dataset.pk and body["owner"] == "owner" and body["source"] == ""


@pytest.mark.parametrize("builtin, params, named", [
    ("calculator", {"cost_per_call": -1}, "cost_per_call"), ("feedback", {"colour": "red"}, "colour"),
])
def test_bad_builtin_parameters_are_refused_naming_them(owner_api, dataset, reward, builtin, params, named):
    response = create(owner_api, dataset, reward, kind="builtin", builtin=builtin, params=params)
    assert response.status_code == 400 and named in str(response.json()["params"])


def test_an_unknown_builtin_is_refused_with_the_choices(owner_api, dataset, reward):
    response = create(owner_api, dataset, reward, kind="builtin", builtin="chess")
    assert response.status_code == 400 and "calculator" in str(response.json()["builtin"])


def test_a_builtin_or_code_environment_needs_a_dataset_and_a_rubric(owner_api, author, reward, dataset):
    response = owner_api.post("/api/environments/", {"name": "bare", "kind": "code", "source": CODE}, format="json")
    assert response.status_code == 400
    assert set(response.json()) == {"dataset", "rubric"}


def test_code_is_checked_on_save_with_the_line(owner_api, author, dataset, reward):
    response = create(owner_api, dataset, reward, kind="code", source="x = 1\ndef step(messages, row)\n    pass\n")
    assert response.status_code == 400
    assert response.json()["source"] == ["line 2: syntax error: expected ':'"]
    response = create(owner_api, dataset, reward, kind="code", source="def step(messages):\n    return None\n")
    assert "line 1: step is called as step(messages, row)" in response.json()["source"][0]


def test_code_is_stored_as_typed(owner_api, author, dataset, reward):
    source = "\n\n" + CODE + "   \n"
    response = create(owner_api, dataset, reward, kind="code", source=source)
    assert response.status_code == 201, response.content
    assert response.json()["source"] == source


def test_writing_code_needs_the_reward_authoring_permission(owner_api, dataset, reward):
    response = create(owner_api, dataset, reward, kind="code", source=CODE)
    assert response.status_code == 403 and "author_reward_code" in response.json()["detail"]


def test_changing_a_code_environment_needs_the_permission_too(owner_api, owner, guess):
    response = owner_api.patch(f"/api/environments/{guess.pk}/", {"name": "renamed"}, format="json")
    assert response.status_code == 403
    grant_reward_authoring(owner)
    assert owner_api.patch(f"/api/environments/{guess.pk}/", {"name": "renamed"}, format="json").status_code == 200


def test_a_verifiers_id_is_refused_where_the_package_is_not_installed(owner_api, author, dataset, reward,
                                                                     monkeypatch):
    monkeypatch.setattr("worker.trainer.environments.verifiers_check.installed", lambda module: False)
    response = create(owner_api, dataset, reward, kind="verifiers", verifiers_id="vf-math")
    assert response.status_code == 400
    message = str(response.json()["verifiers_id"])
    assert "verifiers package is not installed where the control plane runs" in message


def test_a_malformed_verifiers_id_is_refused(owner_api, author, dataset, reward):
    response = create(owner_api, dataset, reward, kind="verifiers", verifiers_id="../etc")
    assert response.status_code == 400 and "not a verifiers environment id" in str(response.json()["verifiers_id"])


def test_a_rubric_naming_a_reward_twice_is_refused(owner_api, dataset, reward):
    response = create(owner_api, dataset, reward, kind="builtin", builtin="feedback",
                      rubric=[{"reward_function": reward.pk}, {"reward_function": reward.pk}])
    assert response.status_code == 400 and "twice" in str(response.json()["rubric"])


def test_an_update_replaces_the_rubric_and_keeps_it_when_left_out(owner_api, calculator, owner):
    from runs.rewards.models.function import RewardFunction

    other = RewardFunction.objects.create(owner=owner, name="fmt", kind="builtin", builtin="format", params={})
    url = f"/api/environments/{calculator.pk}/"
    assert owner_api.patch(url, {"params": {"cost_per_call": 0.5}}, format="json").json()["rubric"][0]["name"] == "acc"
    body = owner_api.patch(url, {"rubric": [{"reward_function": other.pk, "weight": 0.5}]}, format="json").json()
    assert body["rubric"] == [{"reward_function": other.pk, "name": "fmt", "weight": 0.5}]
    assert body["params"]["cost_per_call"] == 0.5


def test_others_cannot_see_nor_use_an_environment_nor_its_parts(other_api, calculator, dataset, reward):
    assert other_api.get("/api/environments/").json()["results"] == []
    assert other_api.get(f"/api/environments/{calculator.pk}/").status_code == 404
    response = create(other_api, dataset, reward, kind="builtin", builtin="feedback")
    assert response.status_code == 400 and {"dataset", "rubric"} <= set(response.json())


def test_a_name_is_unique_per_owner(owner_api, calculator, dataset, reward):
    response = create(owner_api, dataset, reward, name="calc", kind="builtin", builtin="feedback")
    assert response.status_code == 400 and "already have" in str(response.json()["name"])


def test_deleting_an_environment_a_run_uses_is_a_conflict_naming_the_run(owner_api, calculator, run):
    run.environment = calculator
    run.save()
    response = owner_api.delete(f"/api/environments/{calculator.pk}/")
    assert response.status_code == 409 and "run r1" in response.json()["detail"]
    run.delete()
    assert owner_api.delete(f"/api/environments/{calculator.pk}/").status_code == 204
    assert not Environment.objects.filter(pk=calculator.pk).exists()


def test_deleting_a_reward_in_a_rubric_is_a_conflict_naming_the_environment(owner_api, calculator, reward):
    RunReward.objects.filter(reward_function=reward).delete()
    Run.objects.all().delete()
    response = owner_api.delete(f"/api/reward-functions/{reward.pk}/")
    assert response.status_code == 409 and "environment calc" in response.json()["detail"]


def test_the_schema_documents_environments_and_their_dry_run(owner_api):
    schema = owner_api.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    assert {"get", "post"} <= set(schema["paths"]["/api/environments/"])
    assert "post" in schema["paths"]["/api/environments/{id}/dry-run/"]
    assert "rubric" in schema["components"]["schemas"]["Environment"]["properties"]
    assert "environment" in schema["components"]["schemas"]["Run"]["properties"]


def test_a_verifiers_environment_that_can_be_found_is_stored_with_its_own_dataset(owner_api, owner, author,
                                                                                 monkeypatch):
    from runs.datasets.models import Dataset

    monkeypatch.setattr("worker.trainer.environments.verifiers_check.installed", lambda module: True)
    response = owner_api.post("/api/environments/", {"name": "vf", "kind": "verifiers", "verifiers_id": "vf-math",
                                                     "params": {"num_train_examples": 100}}, format="json")
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["rubric"] == [] and body["params"] == {"num_train_examples": 100}
    dataset = Dataset.objects.get(pk=body["dataset"])  # the worker takes its rows from the environment
    assert (dataset.owner, dataset.source, dataset.hub_id, dataset.generator_params, dataset.prompt_column) == (
        owner, "environment", "vf-math", {"num_train_examples": 100}, "prompt")
    alike = owner_api.post("/api/environments/", {"name": "vf again", "kind": "verifiers", "verifiers_id": "vf-math",
                                                  "params": {"num_train_examples": 100}}, format="json")
    other = owner_api.post("/api/environments/", {"name": "vf all", "kind": "verifiers", "verifiers_id": "vf-math"},
                           format="json")
    assert alike.json()["dataset"] == dataset.pk and other.json()["dataset"] != dataset.pk
    assert Dataset.objects.get(pk=other.json()["dataset"]).name == "vf-math (verifiers)"


def test_a_verifiers_environments_dataset_is_not_made_by_hand(owner_api):
    response = owner_api.post("/api/datasets/", {"name": "mine", "source": "environment", "hub_id": "vf-math"},
                              format="json")
    assert response.status_code == 400 and "made as the environment is saved" in str(response.json()["source"])
