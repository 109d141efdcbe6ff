"""Each demo's library (runs/demos/library.py) is stored as the API would store the same inputs
(runs/demos/definitions.py): it is made without the API's serializers, through the checks they use."""
from unittest import mock

import pytest
from django.forms.models import model_to_dict

from runs.demos.library import demo_library
from runs.training_runs.demo_runs import start_demo_run
from runs.demos.definitions import DEMOS
from runs.datasets.models import Dataset
from runs.environments.models.environment import Environment
from runs.rewards.models.function import RewardFunction
from runs.training_runs.models import Run
from runs.configs.models import TrainingConfig

NOT_COMPARED = ("id", "owner", "created_at", "updated_at")
KEYS = sorted(DEMOS)
REWARDS = [(key, index) for key in KEYS for index in range(len(DEMOS[key].rewards))]


def stored(instance, *also_not: str) -> dict:
    return {name: value for name, value in model_to_dict(instance).items() if name not in NOT_COMPARED + also_not}


def made_by_the_api(api, path: str, fields: dict):
    response = api.post(path, fields, format="json")
    assert response.status_code == 201, response.json()
    return response.json()["id"]


def config_fields(key: str) -> dict:
    """The demo's config as the API takes it: the preset, its overrides as values."""
    config = DEMOS[key].config
    return {"name": config["name"], "description": config["description"], "preset": config["preset"],
            "values": config["overrides"]}


def api_library(api, key: str) -> dict:
    """The demo's objects made through the API, by kind; the environment's rubric is the demo's rewards."""
    demo = DEMOS[key]
    made = {"dataset": made_by_the_api(api, "/api/datasets/", demo.dataset),
            "rewards": {fields["name"]: made_by_the_api(api, "/api/reward-functions/", fields)
                        for fields, _ in demo.rewards},
            "config": made_by_the_api(api, "/api/configs/", config_fields(key)), "environment": None}
    if demo.environment is not None:
        made["environment"] = made_by_the_api(api, "/api/environments/", {
            **demo.environment, "dataset": made["dataset"],
            "rubric": [{"reward_function": made["rewards"][fields["name"]], "weight": weight}
                       for fields, weight in demo.rewards]})
    return made


def rubric(environment: Environment) -> list[tuple[str, float]]:
    return [(er.reward_function.name, er.weight) for er in environment.environment_rewards.order_by("id")]


@pytest.mark.parametrize("key", KEYS)
def test_the_demo_dataset_is_what_the_api_stores(owner_api, other_user, key):
    made = made_by_the_api(owner_api, "/api/datasets/", DEMOS[key].dataset)
    assert stored(demo_library(other_user, key).dataset) == stored(Dataset.objects.get(pk=made))


@pytest.mark.parametrize(("key", "index"), REWARDS)
def test_the_demo_rewards_are_what_the_api_stores(owner_api, other_user, key, index):
    fields, weight = DEMOS[key].rewards[index]
    made = made_by_the_api(owner_api, "/api/reward-functions/", fields)
    reward, demo_weight = demo_library(other_user, key).rewards[index]
    assert stored(reward) == stored(RewardFunction.objects.get(pk=made)) and demo_weight == weight


@pytest.mark.parametrize("key", KEYS)
def test_the_demo_config_is_what_the_api_stores(owner_api, other_user, key):
    made = made_by_the_api(owner_api, "/api/configs/", config_fields(key))
    config = demo_library(other_user, key).config
    assert stored(config) == stored(TrainingConfig.objects.get(pk=made))
    for knob, value in DEMOS[key].config["overrides"].items():
        assert config.values[knob] == value


def test_the_tool_use_environment_is_what_the_api_stores(owner_api, other_user):
    made = Environment.objects.get(pk=api_library(owner_api, "tool-use")["environment"])
    environment = demo_library(other_user, "tool-use").environment
    # The dataset and rubric are each owner's own objects: compared by name.
    assert stored(environment, "dataset", "rubric") == stored(made, "dataset", "rubric")
    assert environment.dataset.name == made.dataset.name == DEMOS["tool-use"].dataset["name"]
    assert rubric(environment) == rubric(made) == [("Demo: accuracy", 1.0)]


def test_the_arithmetic_demo_has_no_environment(other_user):
    assert demo_library(other_user, "arithmetic").environment is None


@pytest.mark.parametrize("key", KEYS)
def test_the_demo_run_is_what_the_api_stores(owner_api, other_user, django_capture_on_commit_callbacks, key):
    demo = DEMOS[key]
    with (mock.patch("runs.training_runs.queueing.enqueue_execute_run"),
          django_capture_on_commit_callbacks(execute=True)):
        demo_run = start_demo_run(other_user, key)
    library = demo_library(other_user, key)  # found by name: the same objects the demo run uses
    made = api_library(owner_api, key)
    api_run = Run.objects.get(pk=made_by_the_api(owner_api, "/api/runs/", {
        "name": demo_run.name, "dataset": made["dataset"], "environment": made["environment"],
        "config_template": made["config"],
        "rewards": [{"reward_function": made["rewards"][fields["name"]], "weight": weight}
                    for fields, weight in demo.rewards],
        "eval_rewards": [{"reward_function": made["rewards"][name], "weight": 1.0} for name in demo.eval_rewards],
    }))
    assert demo_run.config == api_run.config and demo_run.config_template == library.config
    assert demo_run.environment == library.environment and demo_run.dataset == library.dataset
    assert [(rr.reward_function.name, rr.weight) for rr in demo_run.run_rewards.order_by("id")] == [
        (rr.reward_function.name, rr.weight) for rr in api_run.run_rewards.order_by("id")]
    # Judged on held-out rows from the first evaluation before training, by the demo's eval rewards.
    assert demo_run.config["eval_steps"] > 0 and demo_run.config["eval_holdout_fraction"] > 0
    assert [rr.reward_function.name for rr in demo_run.run_eval_rewards.all()] == demo.eval_rewards == [
        rr.reward_function.name for rr in api_run.run_eval_rewards.all()]


def test_an_unknown_demo_makes_nothing(other_user):
    with pytest.raises(KeyError):
        start_demo_run(other_user, "chess")
    assert not Dataset.objects.exists() and not Run.objects.exists()
