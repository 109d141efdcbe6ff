"""GET /api/runs/<id>/evaluations/, .../evaluations/<step>/, .../eval-examples/ and
.../eval-examples/<index>/: each evaluation summed up, one evaluation's examples, every example
across evaluations by class, one example followed; bad parameters are 400s naming what is
allowed, what is not there is a 404 that says so."""
import pytest

from runs.evaluation.models import EvalOutcome
from runs.training_runs.models import Run
from tests.support.evaluations import FIVE_CLASSES, PROMPTS, example_key, store_evaluations


@pytest.fixture
def evaluated(run):
    Run.objects.filter(pk=run.pk).update(config={**run.config, "eval_steps": 10, "eval_samples": 1})
    store_evaluations(run, FIVE_CLASSES)
    return Run.objects.get(pk=run.pk)


def test_each_evaluation_is_a_row_with_its_flips_since_the_one_before(owner_api, evaluated):
    body = owner_api.get(f"/api/runs/{evaluated.pk}/evaluations/").json()
    assert body["configured"] is True and body["eval_steps"] == 10 and body["eval_samples"] == 1
    rows = body["evaluations"]
    assert [row["step"] for row in rows] == [0, 10, 20]
    assert [row["passing"] for row in rows] == [2, 3, 2]
    assert [row["pass_at_1"] for row in rows] == [pytest.approx(0.4), pytest.approx(0.6), pytest.approx(0.4)]
    assert [(row["flipped_to_pass"], row["flipped_to_fail"]) for row in rows] == [(None, None), (2, 1), (0, 1)]
    assert [row["previous_step"] for row in rows] == [None, 0, 10]
    assert rows[1]["mean_score"] == pytest.approx(0.6) and rows[1]["model_version"] == 10
    assert rows[1]["metrics"]["eval/pass@1"] == pytest.approx(0.6) and "eval/reward/accuracy_mean" in rows[1]["metrics"]


def test_a_run_that_does_not_evaluate_says_so(owner_api, run):
    body = owner_api.get(f"/api/runs/{run.pk}/evaluations/").json()
    assert body == {"configured": False, "eval_steps": 0, "eval_samples": 1, "evaluations": []}


def test_one_evaluations_examples_come_with_their_answers_and_flips(owner_api, evaluated):
    body = owner_api.get(f"/api/runs/{evaluated.pk}/evaluations/10/").json()
    assert body["count"] == 5
    first, learned = body["results"][0], body["results"][2]
    assert first["prompt"] == PROMPTS[0] and first["key"] == example_key(PROMPTS[0])
    assert learned["passes"] is True and learned["previously_passed"] is False and learned["flipped"] is True
    assert learned["answers"] == [{"text": "answer 2.0 at step 10: right", "rewards": {"accuracy": 1.0},
                                   "total_reward": 1.0, "passed": True, "num_tokens": 7, "finish_reason": "stop"}]
    assert learned["score"] == 1.0 and learned["pass_rate"] == 1.0 and learned["model_version"] == 10


@pytest.mark.parametrize("outcome, indices", [("passed", [1, 2, 4]), ("failed", [0, 3]), ("flipped", [2, 3, 4])])
def test_an_evaluations_examples_filter_by_outcome(owner_api, evaluated, outcome, indices):
    body = owner_api.get(f"/api/runs/{evaluated.pk}/evaluations/10/", {"outcome": outcome}).json()
    assert [row["index"] for row in body["results"]] == indices


def test_nothing_flipped_at_the_first_evaluation(owner_api, evaluated):
    body = owner_api.get(f"/api/runs/{evaluated.pk}/evaluations/0/", {"outcome": "flipped"}).json()
    assert body["count"] == 0
    first = owner_api.get(f"/api/runs/{evaluated.pk}/evaluations/0/").json()["results"][0]
    assert first["previously_passed"] is None and first["flipped"] is False


def test_an_evaluations_examples_are_paginated(owner_api, evaluated):
    body = owner_api.get(f"/api/runs/{evaluated.pk}/evaluations/20/", {"page_size": 2, "page": 3}).json()
    assert body["count"] == 5 and [row["index"] for row in body["results"]] == [4] and body["next"] is None


def test_a_bad_outcome_filter_names_the_allowed_values(owner_api, evaluated):
    response = owner_api.get(f"/api/runs/{evaluated.pk}/evaluations/10/", {"outcome": "right"})
    assert response.status_code == 400
    assert response.json() == {"outcome": ['"right" is not one of the allowed values: passed, failed, flipped']}


@pytest.mark.parametrize("step", [5, 2**70])
def test_a_step_without_an_evaluation_is_a_404_naming_the_steps_there_are(owner_api, evaluated, step):
    response = owner_api.get(f"/api/runs/{evaluated.pk}/evaluations/{step}/")
    assert response.status_code == 404
    assert response.json() == {"detail": f"run {evaluated.pk} was not evaluated at step {step}; "
                                         "it was at steps 0, 10, 20"}


def test_a_run_without_evaluations_says_so_for_any_step(owner_api, run):
    response = owner_api.get(f"/api/runs/{run.pk}/evaluations/0/")
    assert response.status_code == 404 and response.json()["detail"] == f"run {run.pk} has no evaluations yet"


def test_every_example_is_classified_across_the_evaluations(owner_api, evaluated):
    body = owner_api.get(f"/api/runs/{evaluated.pk}/eval-examples/").json()
    assert body["steps"] == [0, 10, 20]
    assert body["counts"] == {"always_passed": 1, "never_passed": 1, "learned": 1, "forgotten": 1, "unstable": 1}
    by_index = {row["index"]: row for row in body["examples"]}
    assert [by_index[i]["classification"] for i in range(5)] == [
        "never_passed", "always_passed", "learned", "forgotten", "unstable"]
    assert by_index[4]["pass_rates"] == [0.0, 1.0, 0.0] and by_index[4]["flips"] == 2
    assert by_index[2]["prompt_preview"] == PROMPTS[2] and by_index[2]["key"] == example_key(PROMPTS[2])


def test_examples_filter_by_class_and_the_counts_stay_whole(owner_api, evaluated):
    body = owner_api.get(f"/api/runs/{evaluated.pk}/eval-examples/", {"classification": "learned"}).json()
    assert [row["index"] for row in body["examples"]] == [2]
    assert sum(body["counts"].values()) == 5


def test_a_bad_class_names_the_allowed_ones(owner_api, evaluated):
    response = owner_api.get(f"/api/runs/{evaluated.pk}/eval-examples/", {"classification": "moved"})
    assert response.status_code == 400
    assert "always_passed, never_passed, learned, forgotten, unstable" in response.json()["classification"][0]


def test_one_example_is_followed_across_every_evaluation(owner_api, evaluated):
    body = owner_api.get(f"/api/runs/{evaluated.pk}/eval-examples/4/").json()
    assert body["index"] == 4 and body["prompt"] == PROMPTS[4] and body["key"] == example_key(PROMPTS[4])
    assert body["classification"] == "unstable" and body["flips"] == 2
    assert [(e["step"], e["passes"]) for e in body["evaluations"]] == [(0, False), (10, True), (20, False)]
    assert body["evaluations"][1]["answers"][0]["text"] == "answer 4.0 at step 10: right"


def test_an_example_the_run_does_not_have_is_a_404(owner_api, evaluated):
    response = owner_api.get(f"/api/runs/{evaluated.pk}/eval-examples/9/")
    assert response.status_code == 404
    assert response.json() == {"detail": f"run {evaluated.pk} has no evaluation example 9"}


def test_an_example_passes_when_at_least_half_its_answers_pass(owner_api, run):
    store_evaluations(run, {0: [[True, False], [True, False, False]], 5: [[True, True], [True, True, False]]})
    rows = owner_api.get(f"/api/runs/{run.pk}/evaluations/").json()["evaluations"]
    assert [row["passing"] for row in rows] == [1, 2] and rows[1]["flipped_to_pass"] == 1
    assert rows[0]["pass_at_1"] == pytest.approx((1 / 2 + 1 / 3) / 2)
    examples = owner_api.get(f"/api/runs/{run.pk}/eval-examples/").json()["examples"]
    assert [e["classification"] for e in examples] == ["always_passed", "learned"]
    assert EvalOutcome.objects.get(run=run, step=0, index=1).passed == 1


def test_a_resumed_run_that_evaluates_a_step_again_keeps_the_latest_answers(owner_api, run):
    store_evaluations(run, {0: [False]})
    store_evaluations(run, {0: [True]})
    body = owner_api.get(f"/api/runs/{run.pk}/eval-examples/0/").json()
    assert [(e["step"], e["passes"]) for e in body["evaluations"]] == [(0, True)]


@pytest.mark.parametrize("path", ["evaluations/", "evaluations/0/", "eval-examples/", "eval-examples/0/"])
def test_another_users_runs_evaluations_are_not_found(other_api, evaluated, path):
    response = other_api.get(f"/api/runs/{evaluated.pk}/{path}")
    assert response.status_code == 404 and "detail" in response.json()


@pytest.mark.parametrize("path", ["evaluations/", "eval-examples/"])
def test_an_unknown_run_is_a_json_404(owner_api, db, path):
    response = owner_api.get(f"/api/runs/999999/{path}")
    assert response.status_code == 404 and "detail" in response.json()


def test_the_schema_documents_the_evaluation_endpoints(owner_api):
    schema = owner_api.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    paths = schema["paths"]
    outcomes = paths["/api/runs/{run_id}/evaluations/{step}/"]["get"]
    assert {p["name"] for p in outcomes["parameters"]} >= {"outcome", "page", "page_size"}
    assert "passed at the evaluation before" in outcomes["description"]
    examples = paths["/api/runs/{run_id}/eval-examples/"]["get"]
    assert "never moved" in examples["description"]
    for path in ("/api/runs/{run_id}/eval-examples/{index}/", "/api/runs/{run_id}/evaluations/"):
        assert "get" in paths[path]
