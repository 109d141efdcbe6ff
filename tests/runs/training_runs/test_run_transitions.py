"""Every status transition of a run: the legal ones happen, the illegal ones are refused and change nothing."""
import pytest

from runs.training_runs.models import IllegalTransition, Run, RunStatus as S
from runs.training_runs.models import TRANSITIONS

MOVES = {
    S.QUEUED: lambda run: run.enqueue(),
    S.STARTING: lambda run: run.mark_starting(),
    S.RUNNING: lambda run: run.mark_running(),
    S.SUCCEEDED: lambda run: run.mark_succeeded(),
    S.FAILED: lambda run: run.mark_failed("boom"),
    S.CANCELLED: lambda run: run.mark_cancelled(),
    S.LOST: lambda run: run.mark_lost(),
}
ALL_PAIRS = [(source, target) for source in S.values for target in MOVES]


def _run_in(run: Run, status: str) -> Run:
    run.status = status
    run.save()
    return run


@pytest.mark.parametrize(("source", "target"), [p for p in ALL_PAIRS if p[1] in TRANSITIONS[p[0]]])
def test_legal_transition_changes_status(run, source, target):
    _run_in(run, source)
    MOVES[target](run)
    assert run.status == target


@pytest.mark.parametrize(("source", "target"), [p for p in ALL_PAIRS if p[1] not in TRANSITIONS[p[0]]])
def test_illegal_transition_is_refused_and_changes_nothing(run, source, target):
    _run_in(run, source)
    with pytest.raises(IllegalTransition) as refused:
        MOVES[target](run)
    assert run.status == source
    assert refused.value.current == source and refused.value.target == target
    assert source in str(refused.value) and target in str(refused.value)


def test_succeeded_is_final(run):
    assert TRANSITIONS[S.SUCCEEDED] == set()


def test_enqueue_counts_attempts_and_clears_previous_failure(run):
    run.enqueue()
    run.mark_starting()
    run.mark_failed("oom")
    assert run.finished_at is not None and run.error_message == "oom"
    run.enqueue()
    assert run.attempt == 2
    assert run.error_message == "" and run.finished_at is None


def test_timestamps_follow_the_lifecycle(run):
    run.enqueue()
    assert run.queued_at and run.started_at is None
    run.mark_starting()
    started = run.started_at
    run.mark_running()
    assert run.started_at == started  # set once, at the first start
    run.mark_succeeded()
    assert run.finished_at >= started


@pytest.mark.parametrize("status", [S.CREATED, S.QUEUED])
def test_cancel_before_a_worker_has_it_is_immediate(run, status):
    _run_in(run, status)
    run.request_cancel()
    assert run.status == S.CANCELLED and not run.cancel_requested


@pytest.mark.parametrize("status", [S.STARTING, S.RUNNING])
def test_cancel_of_a_working_run_is_a_request(run, status):
    _run_in(run, status)
    run.request_cancel()
    assert run.status == status and run.cancel_requested


@pytest.mark.parametrize("status", [S.SUCCEEDED, S.FAILED, S.CANCELLED, S.LOST])
def test_cancel_of_a_finished_run_is_refused(run, status):
    _run_in(run, status)
    with pytest.raises(IllegalTransition, match="nothing to cancel"):
        run.request_cancel()


def test_requeue_clears_a_pending_cancel_request(run):
    _run_in(run, S.RUNNING)
    run.request_cancel()
    run.mark_cancelled()
    run.enqueue()
    assert not run.cancel_requested


def test_reported_repeat_of_current_status_is_a_no_op(run):
    _run_in(run, S.RUNNING)
    assert run.report_status(S.RUNNING) is False
    assert run.status == S.RUNNING


def test_reported_failure_keeps_the_reason(run):
    _run_in(run, S.RUNNING)
    assert run.report_status(S.FAILED, "trainer exited with code 137")
    assert run.error_message == "trainer exited with code 137"


def test_reported_failure_without_reason_says_so(run):
    _run_in(run, S.RUNNING)
    run.report_status(S.FAILED)
    assert "without a reason" in run.error_message


def test_ingest_token_is_stored_hashed_and_replaced_on_reissue(run):
    first = run.issue_ingest_token()
    assert first not in run.ingest_token_hash and len(run.ingest_token_hash) == 64
    assert run.ingest_token_matches(first)
    second = run.issue_ingest_token()
    assert run.ingest_token_matches(second) and not run.ingest_token_matches(first)


def test_run_without_token_accepts_none(run):
    assert not run.ingest_token_matches("")
    assert not run.ingest_token_matches("anything")
