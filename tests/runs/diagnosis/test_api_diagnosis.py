"""`GET /api/runs/<id>/diagnosis/`: the engine's answer on the run's stored metrics, in the shape
the schema gives, for a run in any state; another account's run is a 404."""
from django.utils import timezone

from runs.models import MetricPoint
from tests.runs.diagnosis.documented import assert_as_documented
from tests.runs.diagnosis.made_up_runs import step_of
from tests.runs.test_api_schema import schema  # noqa: F401 (a fixture)

PATH = "/api/runs/{run_id}/diagnosis/"


def store(run, values: dict[str, float], steps, attempt: int = 1) -> None:
    now = timezone.now()
    MetricPoint.objects.bulk_create([MetricPoint(run=run, name=name, step=step, value=value, time=now, attempt=attempt)
                                     for step in steps for name, value in values.items()])


def test_a_run_that_waited_for_rollouts_is_diagnosed_as_the_schema_says(owner_api, run, schema):  # noqa: F811
    store(run, step_of(12.0, 6.0, async__blocked_by_inflight_cap=0.9, async__blocked_by_staleness=0.0), range(1, 31))
    response = owner_api.get(f"/api/runs/{run.pk}/diagnosis/")
    assert response.status_code == 200
    assert_as_documented(schema, PATH, "get", response)
    body = response.json()
    assert (body["status"], body["bottleneck"], body["window"], body["steps_measured"]) == \
        ("ok", "generation", [11, 30], 20)


def test_a_run_with_no_metrics_is_too_short_as_the_schema_says(owner_api, run, schema):  # noqa: F811
    response = owner_api.get(f"/api/runs/{run.pk}/diagnosis/")
    assert response.status_code == 200
    assert_as_documented(schema, PATH, "get", response)
    assert (response.json()["status"], response.json()["time_split"]) == ("too_short", [])


def test_a_step_trained_again_after_a_resume_counts_with_the_later_attempts_value(owner_api, run):
    store(run, step_of(12.0, 6.0), range(1, 11))
    store(run, step_of(0.2, 18.0), range(2, 11), attempt=2)
    assert owner_api.get(f"/api/runs/{run.pk}/diagnosis/").json()["bottleneck"] == "training"


def test_another_accounts_run_is_not_found(other_api, run):
    store(run, step_of(12.0, 6.0), range(1, 11))
    assert other_api.get(f"/api/runs/{run.pk}/diagnosis/").status_code == 404


def test_the_diagnosis_reads_the_database_twice_however_long_the_run(owner_api, run, django_assert_max_num_queries):
    store(run, step_of(12.0, 6.0), range(1, 200))
    with django_assert_max_num_queries(2 + 3):  # the window's steps and points; the account and the run
        assert owner_api.get(f"/api/runs/{run.pk}/diagnosis/").status_code == 200
