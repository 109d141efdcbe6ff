"""The demo run's library (runs/actions/demo.py) is stored as the API would store the same
inputs: it is made without the API's serializers, through the checks they use."""
from unittest import mock

import pytest
from django.forms.models import model_to_dict

from runs.actions.demo import (
    DEMO_CONFIG, DEMO_DATASET, DEMO_EVAL_REWARDS, DEMO_REWARDS, demo_library, start_demo_run,
)
from runs.models import Dataset, RewardFunction, Run, TrainingConfig

NOT_COMPARED = ("id", "owner", "created_at", "updated_at")


def stored(instance) -> dict:
    return {name: value for name, value in model_to_dict(instance).items() if name not in NOT_COMPARED}


def made_by_the_api(api, path: str, fields: dict):
    response = api.post(path, fields, format="json")
    assert response.status_code == 201, response.json()
    return response.json()["id"]


@pytest.fixture
def demo(other_user):
    return demo_library(other_user)


def test_the_demo_dataset_is_what_the_api_stores(owner_api, demo):
    made = made_by_the_api(owner_api, "/api/datasets/", DEMO_DATASET)
    assert stored(demo.dataset) == stored(Dataset.objects.get(pk=made))


@pytest.mark.parametrize("index", range(len(DEMO_REWARDS)))
def test_the_demo_rewards_are_what_the_api_stores(owner_api, demo, index):
    fields, weight = DEMO_REWARDS[index]
    made = made_by_the_api(owner_api, "/api/reward-functions/", fields)
    reward, demo_weight = demo.rewards[index]
    assert stored(reward) == stored(RewardFunction.objects.get(pk=made)) and demo_weight == weight


def test_the_demo_config_is_what_the_api_stores(owner_api, demo):
    made = made_by_the_api(owner_api, "/api/configs/", DEMO_CONFIG)
    assert stored(demo.config) == stored(TrainingConfig.objects.get(pk=made))


def test_the_demo_run_is_what_the_api_stores(owner_api, other_user, django_capture_on_commit_callbacks):
    with mock.patch("runs.queueing.enqueue_execute_run"), django_capture_on_commit_callbacks(execute=True):
        demo_run = start_demo_run(other_user)
    library = demo_library(other_user)  # found by name: the same objects the demo run uses
    rewards = {fields["name"]: made_by_the_api(owner_api, "/api/reward-functions/", fields)
               for fields, _ in DEMO_REWARDS}
    made = made_by_the_api(owner_api, "/api/runs/", {
        "name": demo_run.name, "dataset": made_by_the_api(owner_api, "/api/datasets/", DEMO_DATASET),
        "config_template": made_by_the_api(owner_api, "/api/configs/", DEMO_CONFIG),
        "rewards": [{"reward_function": rewards[fields["name"]], "weight": weight} for fields, weight in DEMO_REWARDS],
        "eval_rewards": [{"reward_function": rewards[name], "weight": 1.0} for name in DEMO_EVAL_REWARDS],
    })
    api_run = Run.objects.get(pk=made)
    assert demo_run.config == api_run.config and demo_run.config_template == library.config
    assert [(rr.reward_function.name, rr.weight) for rr in demo_run.run_rewards.order_by("id")] == [
        (rr.reward_function.name, rr.weight) for rr in api_run.run_rewards.order_by("id")]
    # Judged on held-out rows by accuracy alone, from the first evaluation before training.
    assert demo_run.config["eval_steps"] > 0 and demo_run.config["eval_holdout_fraction"] > 0
    assert [rr.reward_function.name for rr in demo_run.run_eval_rewards.all()] == DEMO_EVAL_REWARDS == [
        rr.reward_function.name for rr in api_run.run_eval_rewards.all()]
