"""GET /api/compare/ and /api/compare/samples/: aligned series, config diff, summary, samples
side by side; bad parameters are 400s naming them; runs the user may not see are 404s."""
import datetime

import pytest

from runs.training_runs.models import Run, RunReward
from runs.telemetry.models import Sample
from tests.support.telemetry import T0, add_points
from worker.trainer.config import TrainingConfig as ConfigSchema


@pytest.fixture
def two_runs(run, owner, dataset, reward):
    other = Run.objects.create(owner=owner, name="r2", dataset=dataset,
                               config=ConfigSchema(max_steps=5, learning_rate=3e-6).model_dump())
    RunReward.objects.create(run=other, reward_function=reward, weight=0.5)
    return run, other


def compare(client, runs, **params):
    return client.get("/api/compare/", {"runs": ",".join(str(r.pk) for r in runs), **params})


def test_the_comparison_holds_series_diff_and_summary_for_each_run(owner_api, two_runs):
    first, second = two_runs
    add_points(first, "rollout/reward_mean", range(10), value=lambda s: s / 10)
    add_points(second, "rollout/reward_mean", range(6), value=lambda s: 0.9 - s / 10)
    add_points(first, "system/generation_tokens_per_s", range(10), value=lambda s: 100.0)
    response = compare(owner_api, two_runs)
    assert response.status_code == 200, response.content
    body = response.json()
    assert [run["id"] for run in body["runs"]] == [first.pk, second.pk]
    assert body["metrics"] == ["rollout/reward_mean"]
    assert body["available_metrics"] == ["rollout/reward_mean", "system/generation_tokens_per_s"]
    series = body["series"]["rollout/reward_mean"]
    assert series["x"] == list(range(10))
    assert series["values"][str(second.pk)][5:] == [pytest.approx(0.4), None, None, None, None]
    fields = {entry["field"]: entry for entry in body["config_diff"]["differing"]}
    assert set(fields) == {"config.learning_rate", "rewards.acc.weight"}
    assert fields["config.learning_rate"]["group"] == "Training"
    assert fields["rewards.acc.weight"]["values"] == {str(first.pk): 1.0, str(second.pk): 0.5}
    assert {"field": "config.model", "value": ConfigSchema().model, "group": "Model"} in body["config_diff"]["equal"]
    summary = {line["run"]: line for line in body["summary"]}
    assert summary[first.pk]["final_reward"] == pytest.approx(0.9)
    assert summary[first.pk]["best_reward"] == pytest.approx(0.9)
    assert summary[second.pk]["best_reward"] == pytest.approx(0.9)
    assert summary[second.pk]["final_reward"] == pytest.approx(0.4)
    assert summary[first.pk]["steps"] == 9 and summary[second.pk]["steps"] == 5
    assert summary[first.pk]["tokens_per_s"] == 100.0 and summary[second.pk]["tokens_per_s"] is None


def test_named_metrics_and_x_axis_are_honoured(owner_api, two_runs):
    for made in two_runs:
        add_points(made, "train/loss", range(1, 4))
    body = compare(owner_api, two_runs, metrics="train/loss,absent", x="samples").json()
    assert body["metrics"] == ["train/loss", "absent"] and body["x"] == "samples"
    assert body["series"]["train/loss"]["x"] == [8, 16, 24]  # 8 completions per step by default
    assert body["series"]["absent"]["missing"] == [run.pk for run in two_runs]


def test_durations_run_from_start_to_finish(owner_api, two_runs):
    first, second = two_runs
    Run.objects.filter(pk=first.pk).update(status="succeeded", started_at=T0,
                                           finished_at=T0 + datetime.timedelta(minutes=3))
    summary = {line["run"]: line for line in compare(owner_api, two_runs).json()["summary"]}
    assert summary[first.pk]["duration_s"] == 180.0 and summary[first.pk]["status"] == "succeeded"
    assert summary[second.pk]["duration_s"] is None


def test_a_run_the_user_may_not_see_is_refused_as_not_found(owner_api, other_user, library_for, run):
    hidden = library_for(other_user, "theirs")["run"]
    response = compare(owner_api, [run, hidden])
    assert response.status_code == 404
    assert response.json() == {"detail": f"no run with id {hidden.pk}"}


def test_a_run_that_does_not_exist_reads_the_same_as_a_hidden_one(owner_api, run):
    response = owner_api.get("/api/compare/", {"runs": f"{run.pk},999999"})
    assert response.status_code == 404 and "999999" in response.json()["detail"]


def test_staff_compare_anyone_s_runs(staff_api, other_user, library_for, run):
    hidden = library_for(other_user, "theirs")["run"]
    response = compare(staff_api, [run, hidden])
    assert response.status_code == 200
    assert [entry["owner"] for entry in response.json()["runs"]] == ["owner", "other"]


def test_anonymous_callers_are_asked_to_log_in(anon_api, two_runs):
    assert compare(anon_api, two_runs).status_code == 401


@pytest.mark.parametrize("params, field, message", [
    ({}, "runs", "required"),
    ({"runs": "1"}, "runs", "at least 2"),
    ({"runs": "1,abc"}, "runs", "'abc' is not a run id"),
    ({"runs": "1,2,3,4,5,6,7,8,9"}, "runs", "at most 8"),
    ({"runs": "1,2", "x": "epoch"}, "x", "not a valid choice"),
    ({"runs": "1,2", "points": "5"}, "points", "greater than or equal to 10"),
    ({"runs": "1,2", "points": "many"}, "points", "valid integer"),
    ({"runs": "1,2", "metrics": ",".join(f"m{i}" for i in range(30))}, "metrics", "at most 24"),
])
def test_bad_parameters_are_400s_that_name_them(owner_api, params, field, message):
    response = owner_api.get("/api/compare/", params)
    assert response.status_code == 400
    assert message in " ".join(response.json()[field])


def add_samples(run, step, prompt, completions):
    Sample.objects.bulk_create([Sample(run=run, step=step, group=0, prompt=prompt, completion=text,
                                       total_reward=1.0) for text in completions])


def test_samples_side_by_side_line_up_the_same_prompt_from_each_run(owner_api, two_runs):
    first, second = two_runs
    add_samples(first, 4, "2+2?", ["4", "5"])
    add_samples(first, 8, "3+3?", ["6"])
    add_samples(second, 3, "2+2?", ["four"])
    add_samples(second, 3, "1+1?", ["2"])
    response = owner_api.get("/api/compare/samples/", {"runs": f"{first.pk},{second.pk}", "step": 5})
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["steps"] == {str(first.pk): 4, str(second.pk): 3}
    assert body["ranges"] == {str(first.pk): [4, 8], str(second.pk): [3, 3]}
    shared = body["prompts"][0]
    assert shared["prompt"] == "2+2?"
    assert [c["completion"] for c in shared["completions"][str(first.pk)]] == ["4", "5"]
    assert [c["completion"] for c in shared["completions"][str(second.pk)]] == ["four"]
    assert body["prompts"][1] == {"prompt": "1+1?", "completions": {str(second.pk): [
        {"group": 0, "completion": "2", "rewards": {}, "total_reward": 1.0, "advantage": None,
         "num_tokens": 0, "finish_reason": "", "staleness": 0, "model_version": 0, "turns": None,
         "end_reason": ""}]}}


def test_samples_default_to_the_last_step_all_runs_reached(owner_api, two_runs):
    first, second = two_runs
    add_samples(first, 2, "a", ["x"])
    add_samples(first, 9, "b", ["y"])
    add_samples(second, 6, "c", ["z"])
    body = owner_api.get("/api/compare/samples/", {"runs": f"{first.pk},{second.pk}"}).json()
    assert body["step"] == 6 and body["steps"] == {str(first.pk): 2, str(second.pk): 6}


def test_samples_of_a_hidden_run_are_refused(owner_api, other_user, library_for, run):
    hidden = library_for(other_user, "theirs")["run"]
    response = owner_api.get("/api/compare/samples/", {"runs": f"{run.pk},{hidden.pk}"})
    assert response.status_code == 404


def test_samples_step_must_be_a_step(owner_api, two_runs):
    response = owner_api.get("/api/compare/samples/", {"runs": "1,2", "step": "-1"})
    assert response.status_code == 400 and "step" in response.json()


@pytest.mark.parametrize("params, message", [
    ({}, "required"),
    ({"runs": "1"}, "pick at least 2 different runs to compare, got 1"),
    ({"runs": "1,1"}, "pick at least 2 different runs to compare, got 1"),
    ({"runs": "1,2,3,4,5,6,7,8,9"}, "at most 8 runs can be compared at once, got 9"),
])
def test_samples_refuse_a_count_of_runs_other_than_2_to_8_with_a_400_saying_how_many(owner_api, params, message):
    response = owner_api.get("/api/compare/samples/", params)
    assert response.status_code == 400
    assert message in " ".join(response.json()["runs"])


def test_samples_of_exactly_2_runs_are_answered(owner_api, two_runs):
    first, second = two_runs
    add_samples(first, 1, "2+2?", ["4"])
    add_samples(second, 1, "2+2?", ["four"])
    response = owner_api.get("/api/compare/samples/", {"runs": f"{first.pk},{second.pk}"})
    assert response.status_code == 200, response.content
    assert response.json()["steps"] == {str(first.pk): 1, str(second.pk): 1}


def test_the_schema_says_how_many_runs_both_endpoints_take(owner_api):
    schema = owner_api.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    for path in ("/api/compare/", "/api/compare/samples/"):
        runs = next(p for p in schema["paths"][path]["get"]["parameters"] if p["name"] == "runs")
        assert runs["required"] is True
        assert (runs["schema"]["minItems"], runs["schema"]["maxItems"], runs["schema"]["uniqueItems"]) == (2, 8, True)


def test_the_schema_documents_both_endpoints_and_their_parameters(owner_api):
    schema = owner_api.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    compare_params = {p["name"] for p in schema["paths"]["/api/compare/"]["get"]["parameters"]}
    assert {"runs", "metrics", "x", "points"} <= compare_params
    samples_params = {p["name"] for p in schema["paths"]["/api/compare/samples/"]["get"]["parameters"]}
    assert {"runs", "step"} <= samples_params
