"""The run page (/runs/<id>/) as the server renders it: access, what it embeds for its
scripts, and its buttons (start, cancel, resume, clone) calling the lifecycle actions."""
import re

import pytest

from runs.training_runs.models import Run, RunStatus
from tests.support.run_pages import page_data
from tests.support.telemetry import add_checkpoint, add_log, add_metrics, add_sample


def test_the_owner_sees_the_run_page(logged_in, run):
    response = logged_in.get(f"/runs/{run.pk}/")
    html = response.content.decode()
    assert response.status_code == 200
    assert "r1" in html and 'id="run-status"' in html and "status-created" in html
    assert 'max="5"' in html  # progress bar against max_steps
    assert "vendor/uplot-1.6.32/uPlot.iife.min.js" in html and "js/charts.js" in html


def test_another_users_run_is_404(logged_in, other_user, library_for):
    theirs = library_for(other_user, "theirs")["run"]
    assert logged_in.get(f"/runs/{theirs.pk}/").status_code == 404


def test_a_missing_run_is_404(logged_in):
    assert logged_in.get("/runs/999999/").status_code == 404


def test_staff_may_open_anyones_run(client, staff_user, run):
    client.force_login(staff_user)
    assert client.get(f"/runs/{run.pk}/").status_code == 200


def test_the_page_needs_a_login(client, run):
    assert client.get(f"/runs/{run.pk}/").status_code == 302


def test_the_page_embeds_what_its_scripts_start_from(logged_in, run, reward):
    add_metrics(run, 1, train__loss=0.5, rollout__reward_mean=0.1)
    add_sample(run, 1)
    add_sample(run, 4)
    lines = [add_log(run, f"line {i}") for i in range(3)]
    add_checkpoint(run, 4, "/nowhere/step-4")
    data = page_data(logged_in.get(f"/runs/{run.pk}/"))
    assert data["run"] == run.pk and data["max_steps"] == 5 and data["status"]["status"] == "created"
    assert data["metric_names"] == ["rollout/reward_mean", "train/loss"]
    assert data["sample_steps"] == [1, 4]
    assert [line["id"] for line in data["logs"]] == [line.pk for line in lines]
    assert data["checkpoints"][0]["step"] == 4
    checkpoint = data["checkpoints"][0]
    assert checkpoint["download"] == f"/api/runs/{run.pk}/checkpoints/{checkpoint['id']}/download/"
    assert data["reward_names"] == [reward.name]
    assert data["urls"]["socket"] == f"/ws/runs/{run.pk}/"
    assert data["urls"]["metrics"] == f"/api/runs/{run.pk}/metrics/"
    assert data["urls"]["run"] == f"/api/runs/{run.pk}/"  # asked again for allowed_actions after a status change
    assert data["status_labels"]["lost"] == "Lost" and data["active_statuses"] == ["queued", "running", "starting"]


def test_the_first_charts_series_come_with_the_page(logged_in, run):
    for step in range(1, 4):
        add_metrics(run, step, rollout__reward_mean=step / 10, rollout__reward_std=0.5, train__loss=1.0)
    data = page_data(logged_in.get(f"/runs/{run.pk}/"))
    assert sorted(data["first_series"]) == ["rollout/reward_mean", "rollout/reward_std"]
    assert data["first_series"]["rollout/reward_mean"]["step"] == [1, 2, 3]
    assert data["first_series"]["rollout/reward_mean"]["value"] == [0.1, 0.2, 0.3]


def test_a_run_without_metrics_embeds_no_series(logged_in, run):
    data = page_data(logged_in.get(f"/runs/{run.pk}/"))
    assert data["metric_names"] == [] and data["first_series"] == {}


def test_the_log_tail_is_the_newest_lines_in_order(logged_in, run):
    for i in range(310):
        add_log(run, f"line {i}")
    logs = page_data(logged_in.get(f"/runs/{run.pk}/"))["logs"]
    assert len(logs) == 300 and logs[0]["message"] == "line 10" and logs[-1]["message"] == "line 309"


def test_embedded_text_cannot_break_out_of_the_script(logged_in, run):
    add_log(run, "</script><script>alert(1)</script>")
    html = logged_in.get(f"/runs/{run.pk}/").content.decode()
    assert "</script><script>alert(1)" not in html


def test_the_frozen_config_is_shown_grouped(logged_in, started_run):
    html = logged_in.get(f"/runs/{started_run.pk}/").content.decode()
    assert "Config (frozen)" in html and "<code>learning_rate</code>" in html and "Async pipeline" in html


def test_buttons_match_the_status(logged_in, run):
    created = logged_in.get(f"/runs/{run.pk}/").content.decode()
    assert re.search(r'id="action-start"\s*>', created) and re.search(r'id="action-resume" hidden', created)
    Run.objects.filter(pk=run.pk).update(status=RunStatus.FAILED)
    failed = logged_in.get(f"/runs/{run.pk}/").content.decode()
    assert re.search(r'id="action-resume"\s*>', failed) and re.search(r'id="action-cancel" hidden', failed)


@pytest.mark.parametrize("status, cancel_requested, shown", [
    ("created", False, {"start", "cancel", "clone"}),
    ("queued", False, {"cancel", "clone"}),
    ("running", True, {"clone"}),
    ("failed", False, {"resume", "clone"}),
    ("succeeded", False, {"clone"}),
])
def test_the_buttons_are_the_actions_the_run_allows(logged_in, run, status, cancel_requested, shown):
    Run.objects.filter(pk=run.pk).update(status=status, cancel_requested=cancel_requested)
    response = logged_in.get(f"/runs/{run.pk}/")
    run.refresh_from_db()
    assert page_data(response)["allowed_actions"] == run.allowed_actions()
    html = response.content.decode()
    visible = {action for action in ("start", "cancel", "resume", "clone")
               if re.search(rf'data-action="{action}" id="action-{action}"\s*>', html)}
    assert visible == shown


def test_cancel_from_the_page_cancels_a_queued_run(logged_in, started_run):
    response = logged_in.post(f"/runs/{started_run.pk}/cancel/", follow=True)
    started_run.refresh_from_db()
    assert started_run.status == RunStatus.CANCELLED
    assert "Cancelled before a worker took it" in response.content.decode()


def test_cancel_of_a_running_run_asks_the_worker(logged_in, started_run):
    Run.objects.filter(pk=started_run.pk).update(status=RunStatus.RUNNING)
    html = logged_in.post(f"/runs/{started_run.pk}/cancel/", follow=True).content.decode()
    started_run.refresh_from_db()
    assert started_run.cancel_requested and started_run.status == RunStatus.RUNNING
    assert "Cancel requested" in html


def test_an_illegal_action_is_a_message_not_an_error_page(logged_in, started_run):
    Run.objects.filter(pk=started_run.pk).update(status=RunStatus.SUCCEEDED)
    response = logged_in.post(f"/runs/{started_run.pk}/cancel/", follow=True)
    assert response.status_code == 200 and "Not done" in response.content.decode()


def test_resume_without_a_checkpoint_says_why(logged_in, started_run):
    Run.objects.filter(pk=started_run.pk).update(status=RunStatus.FAILED)
    html = logged_in.post(f"/runs/{started_run.pk}/resume/", follow=True).content.decode()
    assert "no checkpoint to resume from" in html


def test_resume_queues_from_the_newest_checkpoint(logged_in, started_run, broker, django_capture_on_commit_callbacks):
    Run.objects.filter(pk=started_run.pk).update(status=RunStatus.FAILED)
    add_checkpoint(started_run, 2, "/x/step-2")
    with django_capture_on_commit_callbacks(execute=True):
        logged_in.post(f"/runs/{started_run.pk}/resume/")
    started_run.refresh_from_db()
    assert started_run.status == RunStatus.QUEUED and started_run.attempt == 2
    assert broker.call_args.kwargs["args"][1]["resume_from"] == "/x/step-2"


def test_start_from_the_page_queues_a_created_run(logged_in, run, broker, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        response = logged_in.post(f"/runs/{run.pk}/start/")
    run.refresh_from_db()
    assert response.status_code == 302 and run.status == RunStatus.QUEUED
    broker.assert_called_once()


def test_clone_lands_on_the_new_created_run(logged_in, started_run):
    response = logged_in.post(f"/runs/{started_run.pk}/clone/")
    clone = Run.objects.exclude(pk=started_run.pk).get()
    assert response.status_code == 302 and response.url == f"/runs/{clone.pk}/"
    assert clone.status == RunStatus.CREATED and clone.config == started_run.config


def test_actions_on_another_users_run_are_404_and_change_nothing(logged_in, other_user, library_for):
    theirs = library_for(other_user, "theirs")["run"]
    for action in ("start", "cancel", "resume", "clone"):
        assert logged_in.post(f"/runs/{theirs.pk}/{action}/").status_code == 404
    theirs.refresh_from_db()
    assert theirs.status == RunStatus.CREATED and Run.objects.count() == 1


@pytest.mark.parametrize("action", ["start", "cancel", "resume", "clone"])
def test_actions_answer_only_post(logged_in, run, action):
    assert logged_in.get(f"/runs/{run.pk}/{action}/").status_code == 405


def test_resume_from_the_page_on_other_machines_queues_with_the_new_counts(
        logged_in, started_run, broker, django_capture_on_commit_callbacks):
    Run.objects.filter(pk=started_run.pk).update(status=RunStatus.FAILED,
                                                 config={**started_run.config, "gradient_accumulation_steps": 2})
    add_checkpoint(started_run, 2, "/x/step-2")
    page = logged_in.get(f"/runs/{started_run.pk}/").content.decode()
    assert 'name="trainer_machines"' in page and 'name="inference_machines"' in page
    with django_capture_on_commit_callbacks(execute=True):
        html = logged_in.post(f"/runs/{started_run.pk}/resume/", {
            "trainer_machines": "1", "trainer_processes": "2", "inference_machines": "0"}, follow=True).content.decode()
    started_run.refresh_from_db()
    assert started_run.status == RunStatus.QUEUED and started_run.config["trainer_processes"] == 2
    assert "trainer processes 2" in html
    assert broker.call_args.kwargs["args"][1]["config"]["trainer_processes"] == 2


def test_resume_on_machine_counts_the_config_refuses_says_why_and_changes_nothing(logged_in, started_run):
    Run.objects.filter(pk=started_run.pk).update(status=RunStatus.FAILED)
    add_checkpoint(started_run, 2, "/x/step-2")
    before = Run.objects.get(pk=started_run.pk).config
    html = logged_in.post(f"/runs/{started_run.pk}/resume/", {"trainer_machines": "0", "inference_machines": "many"},
                          follow=True).content.decode()
    started_run.refresh_from_db()
    assert "Not resumed" in html and "trainer_machines" in html and "inference_machines" in html
    assert started_run.status == RunStatus.FAILED and started_run.config == before
