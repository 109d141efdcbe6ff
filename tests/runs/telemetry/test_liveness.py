"""Runs whose heartbeat stops become lost; a lost run that reports again is running."""
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone

from runs.telemetry.liveness import mark_lost_runs
from runs.training_runs.models import Run


@pytest.fixture
def running(started_run, settings):
    settings.RUN_HEARTBEAT_TIMEOUT_S = 60
    started_run.mark_starting()
    started_run.mark_running()
    started_run.last_heartbeat_at = timezone.now()
    started_run.save()
    return started_run


def age_heartbeat(run, seconds):
    Run.objects.filter(pk=run.pk).update(last_heartbeat_at=timezone.now() - timedelta(seconds=seconds))


def test_run_with_a_recent_heartbeat_stays_running(running):
    age_heartbeat(running, 30)
    assert mark_lost_runs() == []
    assert Run.objects.get(pk=running.pk).status == "running"


def test_run_silent_past_the_timeout_is_lost(running):
    age_heartbeat(running, 61)
    assert mark_lost_runs() == [running.pk]
    run = Run.objects.get(pk=running.pk)
    assert run.status == "lost" and "heartbeat" in run.error_message and run.finished_at


def test_starting_run_that_never_reported_is_lost(started_run, settings):
    settings.RUN_HEARTBEAT_TIMEOUT_S = 60
    started_run.mark_starting()
    started_run.queued_at = timezone.now() - timedelta(minutes=5)
    started_run.save()
    assert mark_lost_runs() == [started_run.pk]


def test_queued_run_waiting_for_a_worker_is_not_lost(started_run, settings):
    settings.RUN_HEARTBEAT_TIMEOUT_S = 60
    Run.objects.filter(pk=started_run.pk).update(queued_at=timezone.now() - timedelta(hours=1))
    assert mark_lost_runs() == []


def test_sweep_can_be_limited_to_some_runs(running):
    age_heartbeat(running, 120)
    assert mark_lost_runs(Run.objects.none()) == []
    assert mark_lost_runs(Run.objects.filter(pk=running.pk)) == [running.pk]


def test_management_command_reports_what_it_marked(running, capsys):
    age_heartbeat(running, 120)
    call_command("mark_lost_runs")
    assert f"marked 1 run(s) lost: {running.pk}" in capsys.readouterr().out


def test_lost_run_that_reports_again_is_running(running, anon_api):
    age_heartbeat(running, 120)
    mark_lost_runs()
    reply = anon_api.post(f"/api/runs/{running.pk}/events/", {"events": [{"seq": 1, "type": "heartbeat", "step": 9}]},
                          format="json", HTTP_AUTHORIZATION=f"Bearer {running.test_token}").json()
    assert reply["status"] == "running"
    run = Run.objects.get(pk=running.pk)
    assert run.status == "running" and run.error_message == "" and run.current_step == 9


def test_lost_run_may_report_its_final_status(running, anon_api):
    age_heartbeat(running, 120)
    mark_lost_runs()
    reply = anon_api.post(f"/api/runs/{running.pk}/events/",
                          {"events": [{"seq": 1, "type": "status", "status": "succeeded"}]},
                          format="json", HTTP_AUTHORIZATION=f"Bearer {running.test_token}").json()
    assert reply["status"] == "succeeded"


def test_reading_a_silent_run_over_the_api_marks_it_lost(running, owner_api):
    age_heartbeat(running, 120)
    assert owner_api.get(f"/api/runs/{running.pk}/").json()["status"] == "lost"


def test_listing_runs_marks_silent_ones_lost(running, owner_api):
    age_heartbeat(running, 120)
    statuses = {r["id"]: r["status"] for r in owner_api.get("/api/runs/").json()["results"]}
    assert statuses[running.pk] == "lost"


def test_another_users_read_does_not_touch_the_run(running, other_api):
    age_heartbeat(running, 120)
    assert other_api.get(f"/api/runs/{running.pk}/").status_code == 404
    assert Run.objects.get(pk=running.pk).status == "running"


def test_a_non_numeric_id_is_a_404(owner_api):
    assert owner_api.get("/api/runs/abc/").status_code == 404
