"""A run started on an environment: its dataset and rubric fill what the request leaves out (given
ones are used instead), the environment goes into the launch spec, and a verifiers environment
that is not installed here is refused when the run is created; one that is brings its dataset
and may bring no reward function of the library (its own rubric scores the episodes)."""
from pathlib import Path

import pytest

from runs.datasets.models import Dataset
from runs.environments.models.environment import Environment
from runs.rewards.models.function import RewardFunction
from runs.training_runs.models import Run

VERIFIERS_ENVIRONMENTS = Path(__file__).resolve().parents[2] / "support" / "verifiers_envs"


def create(client, **body):
    return client.post("/api/runs/", {"name": "episodes", **body}, format="json")


def test_an_environment_alone_brings_its_dataset_and_rubric(owner_api, calculator, dataset, reward):
    response = create(owner_api, environment=calculator.pk)
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["environment"] == calculator.pk and body["dataset"] == dataset.pk
    assert body["rewards"] == [{"reward_function": reward.pk, "name": "acc", "weight": 1.0}]
    run = Run.objects.get(pk=body["id"])
    assert [(rr.reward_function_id, rr.weight) for rr in run.run_rewards.all()] == [(reward.pk, 1.0)]


def test_a_null_dataset_and_empty_rewards_are_the_environments_too(owner_api, calculator, dataset):
    response = create(owner_api, environment=calculator.pk, dataset=None, rewards=[])
    assert response.status_code == 201, response.content
    assert response.json()["dataset"] == dataset.pk and len(response.json()["rewards"]) == 1


def test_given_dataset_and_rewards_are_used_instead_of_the_environments(owner_api, owner, calculator):
    from runs.datasets.models import Dataset

    other = Dataset.objects.create(owner=owner, name="other", source="generator", generator="arithmetic",
                                   generator_params={"count": 5}, columns=["prompt", "answer"], row_count=5)
    length = RewardFunction.objects.create(owner=owner, name="len", kind="builtin", builtin="length", params={})
    response = create(owner_api, environment=calculator.pk, dataset=other.pk,
                      rewards=[{"reward_function": length.pk, "weight": 0.5}])
    assert response.status_code == 201, response.content
    assert response.json()["dataset"] == other.pk
    assert response.json()["rewards"] == [{"reward_function": length.pk, "name": "len", "weight": 0.5}]


def test_without_an_environment_a_dataset_and_rewards_are_still_required(owner_api):
    response = create(owner_api)
    assert response.status_code == 400
    assert response.json() == {"dataset": ["choose a dataset, or an environment"],
                                "rewards": ["choose at least one reward function, or an environment"]}


def test_someone_elses_environment_is_not_found(other_api, calculator):
    response = create(other_api, environment=calculator.pk)
    assert response.status_code == 400 and "does not exist" in str(response.json()["environment"])


def test_a_verifiers_environment_not_installed_here_is_refused_at_creation(owner_api, owner, dataset, reward,
                                                                           monkeypatch):
    monkeypatch.setattr("worker.trainer.environments.verifiers_check.installed", lambda module: False)
    environment = Environment.objects.create(owner=owner, name="vf", kind="verifiers", verifiers_id="vf-math")
    response = create(owner_api, environment=environment.pk, dataset=dataset.pk,
                      rewards=[{"reward_function": reward.pk}])
    assert response.status_code == 400
    assert "verifiers package is not installed" in str(response.json()["environment"])
    assert not Run.objects.filter(name="episodes").exists()


def test_a_verifiers_environment_whose_module_is_missing_is_refused_naming_it(owner_api, owner, monkeypatch):
    monkeypatch.setattr("worker.trainer.environments.verifiers_check.installed", lambda module: module == "verifiers")
    environment = Environment.objects.create(owner=owner, name="vf", kind="verifiers", verifiers_id="vf-nowhere")
    response = create(owner_api, environment=environment.pk)
    assert response.status_code == 400 and "no module 'vf_nowhere'" in str(response.json()["environment"])


def test_an_installed_verifiers_environment_brings_its_dataset_and_needs_no_reward(
        owner_api, owner, author, monkeypatch, broker, django_capture_on_commit_callbacks):
    pytest.importorskip("verifiers")
    monkeypatch.syspath_prepend(str(VERIFIERS_ENVIRONMENTS))  # vf_tiny: installed here
    environment = Environment.objects.create(owner=owner, name="tiny", kind="verifiers", verifiers_id="vf-tiny",
                                             params={"size": 4})
    response = create(owner_api, environment=environment.pk)
    assert response.status_code == 201, response.content
    body = response.json()
    dataset = Dataset.objects.get(pk=body["dataset"])
    assert (dataset.source, dataset.hub_id, dataset.generator_params) == ("environment", "vf-tiny", {"size": 4})
    assert body["rewards"] == []
    with django_capture_on_commit_callbacks(execute=True):
        assert owner_api.post(f"/api/runs/{body['id']}/start/").status_code == 200
    _, spec = broker.call_args.kwargs["args"]
    assert spec["dataset"] == {**spec["dataset"], "kind": "environment", "verifiers_id": "vf-tiny",
                               "params": {"size": 4}, "split": "train", "prompt_column": "prompt"}
    assert spec["environment"]["verifiers_id"] == "vf-tiny" and spec["rewards"] == []


def test_a_run_on_another_environment_still_needs_a_reward(owner_api, owner, dataset, calculator):
    calculator.environment_rewards.all().delete()
    response = create(owner_api, environment=calculator.pk)
    assert response.status_code == 400 and response.json() == {"rewards": ["choose at least one reward function"]}


def test_the_environment_goes_into_the_launch_spec(owner_api, guess, broker, django_capture_on_commit_callbacks):
    run_id = create(owner_api, environment=guess.pk).json()["id"]
    with django_capture_on_commit_callbacks(execute=True):
        response = owner_api.post(f"/api/runs/{run_id}/start/")
    assert response.status_code == 200, response.content
    _, spec = broker.call_args.kwargs["args"]
    assert spec["environment"]["kind"] == "code" and "def step" in spec["environment"]["source"]
    assert spec["dataset"]["generator"] == "arithmetic" and spec["rewards"][0]["name"] == "acc"


def test_a_clone_keeps_the_environment(owner_api, calculator):
    run_id = create(owner_api, environment=calculator.pk).json()["id"]
    response = owner_api.post(f"/api/runs/{run_id}/clone/")
    assert response.status_code == 201, response.content
    assert response.json()["environment"] == calculator.pk
