"""A run's alarms over the API: all of them at /api/runs/<id>/alarms/, and the newest of each
kind on the run itself, read for a whole list of runs in a fixed number of queries."""
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from runs.alarms.models import Alarm
from runs.training_runs.models import Run, RunReward


def alarm(run, kind, step, stopped=False):
    return Alarm.objects.create(run=run, kind=kind, step=step, message=f"{kind} at step {step}",
                                values={"train/entropy": 0.01}, stopped_run=stopped)


def test_the_alarms_of_a_run_are_listed_in_step_order(owner_api, run):
    later, earlier = alarm(run, "sampler_drift", 9, stopped=True), alarm(run, "entropy_collapse", 4)
    response = owner_api.get(f"/api/runs/{run.pk}/alarms/")
    assert response.status_code == 200
    body = response.json()
    assert [row["id"] for row in body] == [earlier.pk, later.pk]
    assert body[1] == {"id": later.pk, "kind": "sampler_drift", "step": 9, "message": "sampler_drift at step 9",
                       "values": {"train/entropy": 0.01}, "stopped_run": True,
                       "created_at": body[1]["created_at"]}


def test_another_users_run_has_no_alarms_to_show(other_api, run):
    alarm(run, "truncation", 3)
    assert other_api.get(f"/api/runs/{run.pk}/alarms/").status_code == 404


def test_a_run_carries_the_newest_alarm_of_each_kind(owner_api, run):
    alarm(run, "sampler_drift", 2, stopped=True)
    alarm(run, "entropy_collapse", 5)
    alarm(run, "sampler_drift", 8)
    summary = owner_api.get(f"/api/runs/{run.pk}/").json()["alarms"]
    assert summary == [
        {"kind": "sampler_drift", "times": 2, "step": 8, "message": "sampler_drift at step 8", "stopped_run": True},
        {"kind": "entropy_collapse", "times": 1, "step": 5, "message": "entropy_collapse at step 5",
         "stopped_run": False},
    ]


def test_a_run_without_alarms_says_so(owner_api, run):
    assert owner_api.get(f"/api/runs/{run.pk}/").json()["alarms"] == []


def more_runs(run, count):
    for n in range(count):
        other = Run.objects.create(owner=run.owner, name=f"r{n + 2}", dataset=run.dataset, config=dict(run.config))
        RunReward.objects.create(run=other, reward_function=run.run_rewards.get().reward_function)
        alarm(other, "truncation", n + 1)
        alarm(other, "entropy_collapse", n + 2)


def list_queries(client) -> int:
    with CaptureQueriesContext(connection) as queries:
        assert client.get("/api/runs/").status_code == 200
    return len(queries)


@pytest.mark.django_db
def test_listing_runs_reads_their_alarms_in_one_query(owner_api, run):
    more_runs(run, 1)
    few = list_queries(owner_api)
    more_runs(run, 4)
    assert list_queries(owner_api) == few
    listed = owner_api.get("/api/runs/").json()["results"]
    assert all({a["kind"] for a in r["alarms"]} == {"truncation", "entropy_collapse"}
               for r in listed if r["name"] != "r1")
