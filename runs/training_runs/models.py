import hashlib
import hmac
import secrets
from collections.abc import Callable
from datetime import timedelta

from django.conf import settings
from django.db import models, transaction
from django.db.models.signals import post_delete
from django.dispatch import receiver
from django.utils import timezone

from runs.accounts.models import OwnedModel


class RunStatus(models.TextChoices):
    CREATED = "created", "Created"
    QUEUED = "queued", "Queued"
    STARTING = "starting", "Starting"
    RUNNING = "running", "Running"
    SUCCEEDED = "succeeded", "Succeeded"
    FAILED = "failed", "Failed"
    CANCELLED = "cancelled", "Cancelled"
    LOST = "lost", "Lost"


S = RunStatus
# Which status may follow which. A lost run whose worker turns out to be alive
# (heartbeats return) may report again; a finished one is queued anew only by resume.
TRANSITIONS: dict[str, set[str]] = {
    S.CREATED: {S.QUEUED, S.CANCELLED},
    S.QUEUED: {S.STARTING, S.FAILED, S.CANCELLED},
    S.STARTING: {S.RUNNING, S.FAILED, S.CANCELLED, S.LOST},
    S.RUNNING: {S.SUCCEEDED, S.FAILED, S.CANCELLED, S.LOST},
    S.SUCCEEDED: set(),
    S.FAILED: {S.QUEUED},
    S.CANCELLED: {S.QUEUED},
    S.LOST: {S.QUEUED, S.RUNNING, S.SUCCEEDED, S.FAILED, S.CANCELLED},
}
ACTIVE = {S.QUEUED, S.STARTING, S.RUNNING}
FINISHED = {S.SUCCEEDED, S.FAILED, S.CANCELLED, S.LOST}
RESUMABLE = {S.FAILED, S.CANCELLED, S.LOST}
TOKEN_ENDS = {S.SUCCEEDED, S.FAILED, S.CANCELLED}  # a lost run's worker may report again


class RunAction(models.TextChoices):
    """What a person may ask of a run: the API's verbs and the run page's buttons."""
    START = "start", "Start"
    EDIT = "edit", "Edit settings"
    CANCEL = "cancel", "Cancel"
    RESUME = "resume", "Resume"
    CLONE = "clone", "Clone"
    DELETE = "delete", "Delete"


class IllegalTransition(Exception):
    """A status change the state machine does not allow; says from what to what."""

    def __init__(self, run, target, reason=""):
        self.current, self.target = run.status, target
        super().__init__(reason or f"run {run.pk} is {run.status} and cannot become {target}")


def _hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class Run(OwnedModel):
    name = models.CharField(max_length=200)
    dataset = models.ForeignKey("runs.Dataset", on_delete=models.PROTECT, related_name="runs")
    reward_functions = models.ManyToManyField("runs.RewardFunction", through="runs.RunReward", related_name="runs")
    environment = models.ForeignKey(
        "runs.Environment", null=True, blank=True, on_delete=models.PROTECT, related_name="runs",
        help_text="Multi-turn rollouts: the run trains on the environment's dataset with its rubric.")
    eval_dataset = models.ForeignKey(
        "runs.Dataset", null=True, blank=True, on_delete=models.PROTECT, related_name="eval_runs",
        help_text="Held-out examples the run is evaluated on; none = config.eval_holdout_fraction of its dataset.")
    eval_reward_functions = models.ManyToManyField(
        "runs.RewardFunction", through="runs.RunEvalReward", related_name="eval_runs", blank=True)
    config_template = models.ForeignKey(
        "runs.TrainingConfig", null=True, blank=True, on_delete=models.SET_NULL, related_name="runs",
        help_text="The saved config this run's settings were copied from.",
    )
    # Complete, schema-valid settings; editable while created, frozen once started.
    config = models.JSONField(default=dict)
    launch_spec = models.JSONField(null=True, blank=True, editable=False,
                                   help_text="What the worker was given at the last start (token removed).")

    status = models.CharField(max_length=12, choices=RunStatus.choices, default=S.CREATED, db_index=True)
    cancel_requested = models.BooleanField(default=False)
    attempt = models.PositiveIntegerField(default=0, help_text="Starts so far: 1 after start, +1 per resume.")
    current_step = models.PositiveIntegerField(default=0)
    last_heartbeat_at = models.DateTimeField(null=True, blank=True)
    error_message = models.TextField(blank=True)
    queued_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    ingest_token_hash = models.CharField(max_length=64, blank=True, editable=False)

    def __str__(self):
        return f"{self.name} (#{self.pk})"

    # --- the state machine -------------------------------------------------
    def _move(self, target: str) -> None:
        if target not in TRANSITIONS[self.status]:
            raise IllegalTransition(self, target)
        self.status = target
        now = timezone.now()
        if target == S.QUEUED:
            self.queued_at, self.finished_at, self.cancel_requested = now, None, False
            self.error_message = ""
        elif target in (S.STARTING, S.RUNNING) and self.started_at is None:
            self.started_at = now
        elif target in FINISHED:
            self.finished_at = now

    def enqueue(self) -> None:
        """created → queued (start), or failed/cancelled/lost → queued (resume)."""
        self._move(S.QUEUED)
        self.attempt += 1

    def mark_starting(self) -> None:
        self._move(S.STARTING)

    def mark_running(self) -> None:
        self._move(S.RUNNING)

    def mark_succeeded(self) -> None:
        self._move(S.SUCCEEDED)

    def mark_failed(self, reason: str) -> None:
        self._move(S.FAILED)
        self.error_message = reason

    def mark_cancelled(self) -> None:
        self._move(S.CANCELLED)

    def mark_lost(self) -> None:
        self._move(S.LOST)
        self.error_message = "No heartbeat from the worker; it may have died."

    def mark_recovered(self) -> None:
        """A lost run that reports again was only out of touch: it is running."""
        self._move(S.RUNNING)
        self.error_message = ""

    def heartbeat_overdue(self, now, timeout_s: int) -> bool:
        if self.status not in (S.STARTING, S.RUNNING):
            return False
        last_sign = self.last_heartbeat_at or self.queued_at
        return last_sign is None or (now - last_sign).total_seconds() > timeout_s

    def request_cancel(self) -> None:
        """Before a worker has it, cancel at once; after, ask the worker (via the heartbeat reply)."""
        if self.status in (S.CREATED, S.QUEUED):
            self.mark_cancelled()
        elif self.status in (S.STARTING, S.RUNNING):
            self.cancel_requested = True
        else:
            raise IllegalTransition(self, S.CANCELLED, f"run {self.pk} is {self.status}; there is nothing to cancel")

    def report_status(self, target: str, message: str = "") -> bool:
        """Apply a status a worker reported. Repeating the current status is a no-op (False)."""
        if target == self.status:
            return False
        handlers: dict[str, Callable[[], None]] = {
            S.STARTING: self.mark_starting, S.RUNNING: self.mark_running,
            S.SUCCEEDED: self.mark_succeeded, S.CANCELLED: self.mark_cancelled,
        }
        if target == S.FAILED:
            self.mark_failed(message or "The worker reported a failure without a reason.")
        else:
            handlers[target]()
            if message:
                self.error_message = message
        return True

    @property
    def is_active(self) -> bool:
        return self.status in ACTIVE

    @property
    def is_editable(self) -> bool:
        return self.status == S.CREATED

    @property
    def is_resumable_status(self) -> bool:
        return self.status in RESUMABLE

    def allowed_actions(self) -> list[str]:
        """The actions this run's state allows, in RunAction's order, so that clients show
        buttons from the server's rules instead of copying them. Resume is offered by status;
        the verb also needs a checkpoint and says so when there is none."""
        allowed = {
            RunAction.START: self.status == S.CREATED,
            RunAction.EDIT: self.is_editable,
            # request_cancel takes created, queued, starting and running runs; once asked, asking again does nothing.
            RunAction.CANCEL: (self.status == S.CREATED or self.is_active) and not self.cancel_requested,
            RunAction.RESUME: self.is_resumable_status,
            RunAction.CLONE: True,
            RunAction.DELETE: not self.is_active,
        }
        return [action.value for action in RunAction if allowed[action]]

    @property
    def max_steps(self) -> int | None:
        return self.config.get("max_steps")

    # --- ingest token --------------------------------------------------------
    def issue_ingest_token(self) -> str:
        """A fresh secret for this run's workers; only its hash is kept, and older ones stop working."""
        token = secrets.token_urlsafe(32)
        self.ingest_token_hash = _hash_token(token)
        return token

    def ingest_token_matches(self, token: str) -> bool:
        return bool(self.ingest_token_hash) and hmac.compare_digest(self.ingest_token_hash, _hash_token(token))

    def ingest_token_expired(self, now=None) -> bool:
        """True once the run has ended and RUN_TOKEN_GRACE_S has passed since: its worker's last
        events and checkpoint uploads are in by then, and a token left on a disk opens nothing.
        A lost run is not ended (its worker may report again); a resumed one has a new token."""
        if self.status not in TOKEN_ENDS:
            return False
        if self.finished_at is None:  # ended outside the state machine: when is unknown
            return True
        return (now or timezone.now()) - self.finished_at > timedelta(seconds=settings.RUN_TOKEN_GRACE_S)

    def expired_token_message(self) -> str:
        ended = f" at {self.finished_at:%Y-%m-%d %H:%M:%S} UTC" if self.finished_at else ""
        return (f"run {self.pk} {self.status}{ended}; its token was taken for RUN_TOKEN_GRACE_S="
                f"{settings.RUN_TOKEN_GRACE_S} s after that and is no longer valid")


class RunReward(models.Model):
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="run_rewards")
    reward_function = models.ForeignKey("runs.RewardFunction", on_delete=models.PROTECT, related_name="run_rewards")
    weight = models.FloatField(default=1.0)

    class Meta:
        ordering = ["id"]
        constraints = [models.UniqueConstraint(fields=["run", "reward_function"], name="reward_once_per_run")]


class RunEvalReward(models.Model):
    """A reward function that judges the run's evaluations; a run without any is judged by its
    training rewards."""
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="run_eval_rewards")
    reward_function = models.ForeignKey("runs.RewardFunction", on_delete=models.PROTECT,
                                        related_name="run_eval_rewards")
    weight = models.FloatField(default=1.0)

    class Meta:
        ordering = ["id"]
        constraints = [models.UniqueConstraint(fields=["run", "reward_function"], name="eval_reward_once_per_run")]


@receiver(post_delete, sender=Run)
def remove_uploaded_checkpoints(sender, instance: Run, **kwargs):
    """A deleted run's uploaded checkpoints go with it, once the delete has committed."""
    from runs.artifacts.checkpoint_store import remove_run_artifacts

    run_id = instance.pk
    transaction.on_commit(lambda: remove_run_artifacts(run_id))
