"""A run is refused at creation when a reward reads a column its dataset lacks: a judge's template
column, a built-in's column; named with the reward and the columns the dataset has."""
import pytest

from runs.datasets.models import Dataset
from runs.rewards.models.function import RewardFunction
from runs.training_runs.models import Run

TEMPLATE = "Does {completion} answer {prompt} the way {rubric} asks?"


def judge(owner, name="judge", template=TEMPLATE) -> RewardFunction:
    return RewardFunction.objects.create(owner=owner, name=name, kind="judge",
                                         params={"template": template, "model": "Qwen/Qwen2.5-0.5B-Instruct"})


@pytest.fixture
def graded(owner) -> Dataset:
    return Dataset.objects.create(owner=owner, name="graded", source=Dataset.Source.GENERATOR, generator="arithmetic",
                                  generator_params={"count": 5}, columns=["question", "rubric"],
                                  prompt_column="question", row_count=5, preview=[])


def create_run(client, dataset, *rewards, **extra):
    body = {"name": "judged", "dataset": dataset.pk,
            "rewards": [{"reward_function": reward.pk} for reward in rewards], **extra}
    return client.post("/api/runs/", body, format="json")


def test_a_judge_reading_a_column_the_dataset_lacks_is_refused_naming_it(owner_api, owner, dataset):
    response = create_run(owner_api, dataset, judge(owner))
    assert response.status_code == 400
    [message] = response.json()["rewards"]
    assert "reward 'judge'" in message and "'rubric'" in message and "'arith'" in message
    assert "prompt, answer" in message
    assert not Run.objects.exists()


def test_a_judge_reading_columns_the_dataset_has_is_accepted(owner_api, owner, graded):
    assert create_run(owner_api, graded, judge(owner)).status_code == 201


def test_naming_the_prompt_column_in_a_template_is_refused_saying_to_write_prompt(owner_api, owner, graded):
    response = create_run(owner_api, graded, judge(owner, template="Grade {completion} to {question}."))
    assert response.status_code == 400
    [message] = response.json()["rewards"]
    assert "'question'" in message and "prompt column" in message and "{prompt}" in message


def test_a_builtin_reading_a_missing_column_is_refused_on_the_training_dataset(owner_api, owner, graded):
    exact = RewardFunction.objects.create(owner=owner, name="exact", kind="builtin", builtin="exact_match",
                                          params={"column": "label"})
    response = create_run(owner_api, graded, exact)
    assert response.status_code == 400
    assert "'label'" in response.json()["rewards"][0] and "question, rubric" in response.json()["rewards"][0]


def test_a_dataset_whose_columns_are_not_known_yet_is_not_checked(owner_api, owner):
    hub = Dataset.objects.create(owner=owner, name="hub", source=Dataset.Source.HUB, hub_id="org/rows", columns=[])
    assert create_run(owner_api, hub, judge(owner)).status_code == 201


def test_an_evaluation_judge_is_checked_against_the_evaluation_dataset(owner_api, owner, graded, dataset, reward):
    response = create_run(owner_api, dataset, reward, eval_dataset=dataset.pk, config={"eval_steps": 5},
                          eval_rewards=[{"reward_function": judge(owner).pk}])
    assert response.status_code == 400
    [message] = response.json()["eval_rewards"]
    assert "'rubric'" in message and "evaluation dataset" in message
    response = create_run(owner_api, dataset, reward, eval_dataset=graded.pk, config={"eval_steps": 5},
                          eval_rewards=[{"reward_function": judge(owner, name="judge2").pk}])
    assert response.status_code == 201, response.content


def test_changing_a_runs_dataset_checks_its_judges_again(owner_api, owner, graded, dataset):
    run_id = create_run(owner_api, graded, judge(owner)).json()["id"]
    response = owner_api.patch(f"/api/runs/{run_id}/", {"dataset": dataset.pk}, format="json")
    assert response.status_code == 400 and "'rubric'" in response.json()["rewards"][0]
    assert Run.objects.get(pk=run_id).dataset_id == graded.pk
