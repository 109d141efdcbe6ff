"""Evaluations in a comparison: eval/pass@1 charted by default, GET /api/compare/eval-examples/
(the examples the runs share, and each run's classes) and GET /api/compare/eval-example/ (one
example followed in each run, side by side)."""
import pytest

from tests.support.evaluations import FIVE_CLASSES, PROMPTS, example_key, store_evaluations
from tests.support.telemetry import add_points

SHIFTED = PROMPTS[3:]  # a run evaluated on examples 3.. of the others' set: it shares two of five


@pytest.fixture
def runs(make_run):
    first, second, third = make_run("a", eval_steps=10), make_run("b", eval_steps=10), make_run("c")
    store_evaluations(first, FIVE_CLASSES)
    store_evaluations(second, {0: [True, True, False, False, False], 10: [True, True, True, True, True]})
    store_evaluations(third, {0: [False, True]}, prompts=SHIFTED)
    return first, second, third


def ids(*runs) -> str:
    return ",".join(str(run.pk) for run in runs)


def test_the_default_charts_put_the_evaluation_pass_rate_beside_the_reward(owner_api, runs):
    for made in runs:
        add_points(made, "rollout/reward_mean", range(1, 4))
    body = owner_api.get("/api/compare/", {"runs": ids(*runs)}).json()
    assert body["metrics"][:2] == ["rollout/reward_mean", "eval/pass@1"]
    assert body["series"]["eval/pass@1"]["x"] == [0, 10, 20] and "eval/reward_mean" in body["available_metrics"]


def test_each_runs_classes_and_the_examples_they_share(owner_api, runs):
    first, second, third = runs
    body = owner_api.get("/api/compare/eval-examples/", {"runs": ids(*runs)}).json()
    summary = {line["run"]: line for line in body["runs"]}
    assert summary[first.pk]["counts"]["learned"] == 1 and summary[first.pk]["evaluations"] == 3
    assert summary[second.pk]["counts"] == {"always_passed": 2, "never_passed": 0, "learned": 3, "forgotten": 0,
                                            "unstable": 0}
    assert summary[third.pk]["examples"] == 2
    keys = [row["key"] for row in body["examples"]]
    assert keys[:2] == [example_key(PROMPTS[3]), example_key(PROMPTS[4])]  # shared by all three, first
    assert len(keys) == 5 and {row["shared_by"] for row in body["examples"][2:]} == {2}
    shared = body["examples"][0]
    assert shared["prompt_preview"] == PROMPTS[3] and shared["shared_by"] == 3
    assert shared["runs"][str(first.pk)] == {"index": 3, "classification": "forgotten", "flips": 1,
                                             "last_pass_rate": 0.0}
    assert shared["runs"][str(third.pk)]["index"] == 0


def test_one_example_is_followed_in_each_run_side_by_side(owner_api, runs):
    first, second, third = runs
    body = owner_api.get("/api/compare/eval-example/", {"runs": ids(*runs), "key": example_key(PROMPTS[2])}).json()
    assert body["prompt"] == PROMPTS[2]
    columns = body["runs"]
    assert [column["run"] for column in columns] == [first.pk, second.pk, third.pk]
    assert [(e["step"], e["passes"]) for e in columns[0]["evaluations"]] == [(0, False), (10, True), (20, True)]
    assert columns[0]["classification"] == "learned" and columns[1]["classification"] == "learned"
    assert columns[1]["evaluations"][1]["answers"][0]["text"] == "answer 2.0 at step 10: right"
    assert columns[2] == {"run": third.pk, "name": "c", "index": None, "classification": None, "flips": None,
                          "evaluations": []}


def test_a_key_no_run_was_evaluated_on_is_a_404_that_says_so(owner_api, runs):
    response = owner_api.get("/api/compare/eval-example/", {"runs": ids(*runs[:2]), "key": "0" * 16})
    assert response.status_code == 404
    assert "was evaluated on an example with key 0000000000000000" in response.json()["detail"]


@pytest.mark.parametrize("params, field, message", [
    ({"key": "xyz"}, "key", "16 hexadecimal digits"),
    ({"key": None}, "key", "required"),
])
def test_a_bad_key_is_a_400_that_says_what_a_key_is(owner_api, runs, params, field, message):
    query = {"runs": ids(*runs), **{name: value for name, value in params.items() if value is not None}}
    response = owner_api.get("/api/compare/eval-example/", query)
    assert response.status_code == 400 and message in response.json()[field][0]


def test_a_bad_selection_or_a_hidden_run_is_refused_as_for_the_comparison(owner_api, runs, other_user, library_for):
    assert owner_api.get("/api/compare/eval-examples/", {"runs": str(runs[0].pk)}).status_code == 400
    hidden = library_for(other_user, "theirs")["run"]
    response = owner_api.get("/api/compare/eval-examples/", {"runs": ids(runs[0], hidden)})
    assert response.status_code == 404 and response.json() == {"detail": f"no run with id {hidden.pk}"}


def test_runs_without_evaluations_share_nothing(owner_api, make_run):
    body = owner_api.get("/api/compare/eval-examples/", {"runs": ids(make_run("x"), make_run("y"))}).json()
    assert body["examples"] == [] and [line["evaluations"] for line in body["runs"]] == [0, 0]
