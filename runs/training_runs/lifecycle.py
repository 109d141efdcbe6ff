"""Start, cancel, resume and clone: each one transaction, one status change, one live event."""
from django.db import transaction

from runs.accounts import authoring
from runs.artifacts import checkpoint_store
from runs.live.events import publish
from runs.live.messages import StatusMessage
from runs.telemetry.metric_rows import set_aside_retrained_points
from runs.training_runs.launch import build_launch_spec, without_secrets
from runs.training_runs.models import IllegalTransition, Run, RunStatus
from runs.training_runs.queueing import enqueue_execute_run


def _locked(run: Run) -> Run:
    return Run.objects.select_for_update().get(pk=run.pk)


def _enqueue(run: Run, resume_from=None) -> None:
    authoring.check_run_may_start(run)  # a verifiers environment loads its package's code on the worker
    run.enqueue()
    token = run.issue_ingest_token()
    spec = build_launch_spec(run, token, resume_from)
    run.launch_spec = without_secrets(spec)
    run.save()
    enqueue_execute_run(run.pk, spec, queue=run.config.get("worker_pool", "default"))
    publish(StatusMessage.of(run))


@transaction.atomic
def start_run(run: Run) -> Run:
    run = _locked(run)
    if run.status != RunStatus.CREATED:
        raise IllegalTransition(
            run, "queued", f"run {run.pk} is {run.status}; only a created run can be started (use resume or clone)")
    _enqueue(run)
    return run


@transaction.atomic
def resume_run(run: Run, config: dict | None = None) -> Run:
    """`config`: the run's, with the machines it spans changed (runs/training_runs/views/runs.py's ResumeRequest)."""
    run = _locked(run)
    if not run.is_resumable_status:
        raise IllegalTransition(
            run, "queued", f"run {run.pk} is {run.status}; only failed, cancelled or lost runs can be resumed")
    checkpoint = run.checkpoints.order_by("-step").first()
    if checkpoint is None:
        raise IllegalTransition(run, "queued", f"run {run.pk} has no checkpoint to resume from; clone it to start over")
    if config is not None:
        run.config = config
    set_aside_retrained_points(run, checkpoint.step)
    _enqueue(run, resume_from=checkpoint)
    run_id = run.pk
    transaction.on_commit(lambda: checkpoint_store.discard_partial_uploads(run_id))
    return run


@transaction.atomic
def cancel_run(run: Run) -> Run:
    run = _locked(run)
    run.request_cancel()
    run.save()
    publish(StatusMessage.of(run))
    return run


@transaction.atomic
def clone_run(run: Run, owner, name: str | None = None) -> Run:
    """A new created run with the same dataset, environment, rewards and settings, ready to edit and start."""
    clone = Run.objects.create(
        owner=owner, name=name or f"{run.name} (copy)", dataset=run.dataset, environment=run.environment,
        config_template=run.config_template, config=dict(run.config),
    )
    for run_reward in run.run_rewards.all():
        clone.run_rewards.create(reward_function=run_reward.reward_function, weight=run_reward.weight)
    return clone
