"""`GET /api/runs/<id>/diagnosis/`: the engine's answer on the run's stored metrics, in the shape
the schema gives, for a run in any state; another account's run is a 404."""
from unittest import mock

from runs.telemetry.models import MetricPoint
from tests.support.api_schema import assert_as_documented_with_nulls
from tests.support.made_up_runs import series, step_of
from tests.support.telemetry import add_steps

PATH = "/api/runs/{run_id}/diagnosis/"


def test_a_run_that_waited_for_rollouts_is_diagnosed_as_the_schema_says(owner_api, run, schema):
    add_steps(run, step_of(12.0, 6.0, async__blocked_by_inflight_cap=0.9, async__blocked_by_staleness=0.0),
              range(1, 31))
    response = owner_api.get(f"/api/runs/{run.pk}/diagnosis/")
    assert response.status_code == 200
    assert_as_documented_with_nulls(schema, PATH, "get", response)
    body = response.json()
    assert (body["status"], body["bottleneck"], body["window"], body["steps_measured"]) == \
        ("ok", "generation", [11, 30], 20)


def test_a_run_with_no_metrics_is_too_short_as_the_schema_says(owner_api, run, schema):
    response = owner_api.get(f"/api/runs/{run.pk}/diagnosis/")
    assert response.status_code == 200
    assert_as_documented_with_nulls(schema, PATH, "get", response)
    assert (response.json()["status"], response.json()["time_split"]) == ("too_short", [])


def test_a_step_trained_again_after_a_resume_counts_with_the_later_attempts_value(owner_api, run):
    add_steps(run, step_of(12.0, 6.0), range(1, 11))
    add_steps(run, step_of(0.2, 18.0), range(2, 11), attempt=2)
    assert owner_api.get(f"/api/runs/{run.pk}/diagnosis/").json()["bottleneck"] == "training"


def test_another_accounts_run_is_not_found(other_api, run):
    add_steps(run, step_of(12.0, 6.0), range(1, 11))
    assert other_api.get(f"/api/runs/{run.pk}/diagnosis/").status_code == 404


def test_the_diagnosis_reads_the_database_twice_however_long_the_run(owner_api, run, django_assert_max_num_queries):
    add_steps(run, step_of(12.0, 6.0), range(1, 200))
    with django_assert_max_num_queries(2 + 3):  # the window's steps and points; the account and the run
        assert owner_api.get(f"/api/runs/{run.pk}/diagnosis/").status_code == 200


def test_the_first_step_of_each_attempt_holds_start_up_and_is_left_out(owner_api, run):
    add_steps(run, step_of(0.2, 18.0), range(1, 11))
    add_steps(run, step_of(0.2, 18.0), range(11, 21), attempt=2)
    MetricPoint.objects.filter(run=run, step=11, name__in=["async/wait_for_rollouts_s", "system/step_time_s"]) \
        .update(value=500.0)  # the resumed attempt's first step: the model loading, the server starting
    body = owner_api.get(f"/api/runs/{run.pk}/diagnosis/").json()
    assert (body["bottleneck"], body["steps_measured"], body["window"]) == ("training", 18, [2, 20])


def test_an_attempt_that_began_before_the_window_keeps_its_steps_in_it(owner_api, run):
    add_steps(run, step_of(0.2, 18.0), range(1, 6))
    add_steps(run, step_of(0.2, 18.0), range(6, 41), attempt=2)
    body = owner_api.get(f"/api/runs/{run.pk}/diagnosis/").json()
    assert (body["steps_measured"], body["window"]) == (20, [21, 40])


def test_an_infinity_a_step_logged_is_left_out_not_a_server_error(owner_api, run):
    add_steps(run, step_of(12.0, 6.0, system__generation_tokens_per_s=100.0), range(1, 11))
    MetricPoint.objects.filter(run=run, step=5, name="system/generation_tokens_per_s").update(value=float("inf"))
    response = owner_api.get(f"/api/runs/{run.pk}/diagnosis/")
    assert response.status_code == 200
    assert response.json()["throughput"]["generation_tokens_per_s"] == 100.0


def test_a_nan_among_the_points_read_is_left_out_not_a_server_error(owner_api, run):
    # SQLite stores a NaN as NULL (refused here); PostgreSQL keeps it: the points as read, given directly.
    points = series(step_of(12.0, 6.0, system__generation_tokens_per_s=100.0), steps=10)
    points["system/generation_tokens_per_s"][4] = (5, float("nan"))
    with mock.patch("runs.diagnosis.reading.recent_series", return_value=points):
        response = owner_api.get(f"/api/runs/{run.pk}/diagnosis/")
    assert response.status_code == 200
    assert response.json()["throughput"]["generation_tokens_per_s"] == 100.0


def test_steps_the_logged_parts_do_not_explain_answer_no_bottleneck_as_the_schema_says(owner_api, run,
                                                                                        schema):
    add_steps(run, step_of(1.0, 2.0, other=7.0), range(1, 11))
    response = owner_api.get(f"/api/runs/{run.pk}/diagnosis/")
    assert_as_documented_with_nulls(schema, PATH, "get", response)
    assert (response.json()["status"], response.json()["bottleneck"]) == ("ok", None)
