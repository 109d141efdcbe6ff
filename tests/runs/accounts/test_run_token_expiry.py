"""A run's token ends with the run, after RUN_TOKEN_GRACE_S: the check every token route asks
(runs/accounts/run_tokens.py), and what a resume does to it."""
from datetime import timedelta
from unittest import mock

import pytest
from django.utils import timezone
from rest_framework.exceptions import AuthenticationFailed

from runs.training_runs.lifecycle import resume_run
from runs.accounts.run_tokens import run_of_bearer
from runs.checkpoints.models.checkpoint import Checkpoint
from runs.training_runs.models import RunStatus

S = RunStatus


@pytest.fixture(autouse=True)
def grace(settings):
    settings.RUN_TOKEN_GRACE_S = 60


def running(run):
    run.mark_starting()
    run.mark_running()
    return run


def ended(run, status, seconds_ago):
    running(run)
    {S.SUCCEEDED: run.mark_succeeded, S.CANCELLED: run.mark_cancelled,
     S.FAILED: lambda: run.mark_failed("boom")}[status]()
    run.finished_at = timezone.now() - timedelta(seconds=seconds_ago)
    run.save()
    return run


@pytest.mark.parametrize("status", [S.SUCCEEDED, S.FAILED, S.CANCELLED])
def test_an_ended_runs_token_is_taken_within_the_grace_and_refused_after(started_run, status):
    token = started_run.test_token
    ended(started_run, status, seconds_ago=59)
    assert run_of_bearer(started_run.pk, f"Bearer {token}") == started_run  # the worker's last flush

    ended_long_ago = started_run.finished_at - timedelta(seconds=2)
    started_run.finished_at = ended_long_ago
    started_run.save()
    with pytest.raises(AuthenticationFailed) as refused:
        run_of_bearer(started_run.pk, f"Bearer {token}")
    assert str(refused.value.detail) == (
        f"run {started_run.pk} {status} at {ended_long_ago:%Y-%m-%d %H:%M:%S} UTC; its token was taken for "
        "RUN_TOKEN_GRACE_S=60 s after that and is no longer valid")


def test_a_lost_runs_token_stays_valid_for_a_worker_that_comes_back(started_run):
    running(started_run).mark_lost()
    started_run.finished_at = timezone.now() - timedelta(days=1)
    started_run.save()
    assert run_of_bearer(started_run.pk, f"Bearer {started_run.test_token}") == started_run


def test_a_finished_run_without_an_end_time_is_taken_as_ended_long_ago(started_run):
    started_run.status, started_run.finished_at = S.SUCCEEDED, None
    assert started_run.ingest_token_expired()


def test_a_wrong_token_of_an_ended_run_reads_as_no_run(started_run):
    ended(started_run, S.SUCCEEDED, seconds_ago=3600)
    assert run_of_bearer(started_run.pk, "Bearer not-its-token") is None  # not "ended": ids don't leak


def test_a_resumed_run_takes_its_new_token_and_refuses_the_old_one(started_run, django_capture_on_commit_callbacks):
    old = started_run.test_token
    ended(started_run, S.FAILED, seconds_ago=3600)
    Checkpoint.objects.create(run=started_run, step=10, path="/x", size_bytes=1, model_version=1,
                              created_at=timezone.now())
    with mock.patch("runs.training_runs.lifecycle.enqueue_execute_run") as enqueue:
        with django_capture_on_commit_callbacks(execute=True):
            resume_run(started_run)
    new = enqueue.call_args.args[1]["ingest"]["token"]
    assert run_of_bearer(started_run.pk, f"Bearer {new}").status == S.QUEUED
    assert run_of_bearer(started_run.pk, f"Bearer {old}") is None


def test_a_run_id_past_what_the_database_holds_is_no_run(db):
    assert run_of_bearer(2 ** 70, "Bearer anything") is None
