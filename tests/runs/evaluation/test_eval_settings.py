"""A run's evaluation settings over the API: stored, sent to the worker, and refused when the
evaluation could not run (no evaluation set, a column its rewards read missing)."""
import pytest

from runs.training_runs.launch import build_launch_spec
from runs.datasets.models import Dataset
from runs.rewards.models.function import RewardFunction
from runs.training_runs.models import Run


@pytest.fixture
def questions(owner):
    """An evaluation dataset without the answer column the accuracy reward reads."""
    return Dataset.objects.create(owner=owner, name="questions", source=Dataset.Source.GENERATOR,
                                  generator="arithmetic", generator_params={"count": 5}, columns=["prompt", "hint"],
                                  row_count=5, preview=[])


@pytest.fixture
def held_out(owner):
    return Dataset.objects.create(owner=owner, name="held-out", source=Dataset.Source.GENERATOR,
                                  generator="arithmetic", generator_params={"count": 20, "seed": 9},
                                  columns=["prompt", "answer"], row_count=20, preview=[])


@pytest.fixture
def length_reward(owner):
    return RewardFunction.objects.create(owner=owner, name="short", kind="builtin", builtin="length",
                                         params={"max_tokens": 64})


def body(dataset, reward, **extra):
    return {"name": "judged", "dataset": dataset.pk, "rewards": [{"reward_function": reward.pk, "weight": 1.0}],
            **extra}


def test_a_run_with_an_evaluation_dataset_and_its_own_judges_is_stored_and_sent_to_the_worker(
        owner_api, dataset, reward, length_reward, held_out):
    response = owner_api.post("/api/runs/", body(dataset, length_reward, eval_dataset=held_out.pk,
                                                 eval_rewards=[{"reward_function": reward.pk, "weight": 1.0}],
                                                 config={"eval_steps": 10}), format="json")
    assert response.status_code == 201, response.content
    assert response.json()["eval_dataset"] == held_out.pk
    assert response.json()["eval_rewards"] == [{"reward_function": reward.pk, "name": "acc", "weight": 1.0}]
    run = Run.objects.get(pk=response.json()["id"])
    run.enqueue()
    spec = build_launch_spec(run, "token")
    assert spec["eval_dataset"]["params"] == {"count": 20, "seed": 9}
    assert [r["name"] for r in spec["eval_rewards"]] == ["acc"] and [r["name"] for r in spec["rewards"]] == ["short"]


def test_evaluating_without_an_evaluation_set_is_refused_saying_how_to_get_one(owner_api, dataset, reward):
    response = owner_api.post("/api/runs/", body(dataset, reward, config={"eval_steps": 10}), format="json")
    assert response.status_code == 400
    assert "eval_holdout_fraction" in response.json()["eval_dataset"][0]
    assert not Run.objects.exists()


def test_a_holdout_of_the_training_dataset_needs_no_evaluation_dataset(owner_api, dataset, reward):
    response = owner_api.post("/api/runs/", body(dataset, reward, config={"eval_steps": 10,
                                                                          "eval_holdout_fraction": 0.1}), format="json")
    assert response.status_code == 201, response.content
    assert response.json()["eval_dataset"] is None and response.json()["eval_rewards"] == []


def test_an_evaluation_dataset_without_the_column_its_reward_reads_is_refused_naming_it(
        owner_api, dataset, reward, length_reward, questions):
    response = owner_api.post("/api/runs/", body(dataset, length_reward, eval_dataset=questions.pk,
                                                 eval_rewards=[{"reward_function": reward.pk, "weight": 1.0}],
                                                 config={"eval_steps": 5}), format="json")
    assert response.status_code == 400
    message = response.json()["eval_rewards"][0]
    assert "'answer'" in message and "'questions'" in message and "prompt, hint" in message


def test_the_training_rewards_judge_when_none_are_chosen_and_are_checked_against_the_evaluation_dataset(
        owner_api, dataset, reward, questions):
    response = owner_api.post("/api/runs/", body(dataset, reward, eval_dataset=questions.pk,
                                                 config={"eval_steps": 5}), format="json")
    assert response.status_code == 400
    assert "'answer'" in response.json()["rewards"][0]


def test_without_evaluation_the_columns_are_not_checked(owner_api, dataset, reward, questions):
    response = owner_api.post("/api/runs/", body(dataset, reward, eval_dataset=questions.pk), format="json")
    assert response.status_code == 201, response.content


def test_an_edit_that_turns_evaluation_on_is_checked_against_what_the_run_already_has(owner_api, run):
    response = owner_api.patch(f"/api/runs/{run.pk}/", {"config": {"eval_steps": 5}}, format="json")
    assert response.status_code == 400 and "eval_dataset" in response.json()
    response = owner_api.patch(f"/api/runs/{run.pk}/", {"config": {"eval_steps": 5, "eval_holdout_fraction": 0.2}},
                               format="json")
    assert response.status_code == 200, response.content


def test_a_reward_listed_twice_among_the_judges_is_refused(owner_api, dataset, reward):
    judges = [{"reward_function": reward.pk, "weight": 1.0}] * 2
    response = owner_api.post("/api/runs/", body(dataset, reward, eval_rewards=judges), format="json")
    assert response.status_code == 400 and "twice" in str(response.json()["eval_rewards"])


def test_an_unknown_alarm_to_stop_on_is_refused_naming_the_known_ones(owner_api, dataset, reward):
    response = owner_api.post("/api/runs/", body(dataset, reward, config={"alarm_stop_on": "entropy_collapse,panic"}),
                              format="json")
    assert response.status_code == 400
    message = str(response.json()["config"]["alarm_stop_on"])
    assert "'panic'" in message and "eval_diverging" in message
