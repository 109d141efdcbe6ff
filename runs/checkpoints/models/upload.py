"""A worker's upload of one checkpoint (a run and a step): the row that makes finishing it happen once.

The worker declares the files it will send (`declare`), sends them in chunks, then completes
with its manifest. Completing only moves the row to FINISHING and enqueues the background task
that checks every file and moves it into the store (runs/checkpoints/finishing.py); the worker polls
the row until it is DONE, or FAILED naming the files to send again. Every move is one conditional
UPDATE (compare and set on `state` and `round`), so two completes racing each other, or a task
message delivered twice, finish the upload once, on SQLite and PostgreSQL alike.
"""
from collections.abc import Sequence
from datetime import timedelta

from django.db import models
from django.db.models import F, Q
from django.utils import timezone

# A FINISHING upload that has not said anything for this long lost its task (a consumer that
# died mid-way): the worker's next complete starts it again, as a new round.
FINISHING_STALE_AFTER = timedelta(minutes=15)


class UploadState(models.TextChoices):
    RECEIVING = "receiving", "Receiving"  # chunks are welcome
    FINISHING = "finishing", "Finishing"  # checked and stored in the background; the files are fixed
    DONE = "done", "Done"                 # listed as the run's checkpoint of this step
    FAILED = "failed", "Failed"           # `send_again` names the files to send anew; else complete again


class UploadBusy(Exception):
    """The upload is being finished: its files may not change until it is done or failed."""


class CheckpointUpload(models.Model):
    run = models.ForeignKey("runs.Run", on_delete=models.CASCADE, related_name="checkpoint_uploads")
    step = models.PositiveIntegerField()
    state = models.CharField(max_length=10, choices=UploadState.choices, default=UploadState.RECEIVING)
    declared = models.JSONField(default=list, help_text="[{path, size}] the worker said it sends.")
    manifest = models.JSONField(default=dict, blank=True, help_text="The manifest of the last complete.")
    round = models.PositiveIntegerField(default=0, help_text="Completes that started a finish; a task finishes "
                                                             "only its own round.")
    send_again = models.JSONField(default=list, blank=True)
    detail = models.TextField(blank=True, help_text="Progress while finishing; what went wrong when failed.")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["run", "step"], name="one_upload_per_run_step")]

    def __str__(self):
        return f"run {self.run_id} step {self.step}: {self.state}"

    @property
    def declared_sizes(self) -> dict[str, int]:
        return {entry["path"]: entry["size"] for entry in self.declared}

    @classmethod
    def declare(cls, run, step: int, files: list[dict]) -> "CheckpointUpload":
        """Opens (or reopens: a step saved again) the upload for `files`; UploadBusy while finishing."""
        upload, _ = cls.objects.get_or_create(run=run, step=step)  # a racing create: it gets the row
        opened = cls.objects.filter(pk=upload.pk).exclude(state=UploadState.FINISHING).update(
            state=UploadState.RECEIVING, declared=files, send_again=[], detail="", updated_at=timezone.now())
        if not opened:
            raise UploadBusy(f"the upload of step {step} is being finished; ask for its state")
        upload.refresh_from_db()
        return upload

    def start_finishing(self, manifest: dict) -> bool:
        """True when this call moved the upload to FINISHING (a new round); False when another one
        had already (or it is done): the caller then reports the state as it is."""
        stale = timezone.now() - FINISHING_STALE_AFTER
        started = CheckpointUpload.objects.filter(pk=self.pk).filter(
            Q(state__in=[UploadState.RECEIVING, UploadState.FAILED])
            | Q(state=UploadState.FINISHING, updated_at__lt=stale)).update(
            state=UploadState.FINISHING, manifest=manifest, round=F("round") + 1, send_again=[],
            detail="checking the files against the manifest", updated_at=timezone.now())
        self.refresh_from_db()
        return bool(started)

    # The background task writes through these; each does nothing unless the upload is still
    # finishing `round` (a later round, a reopened upload or a deleted run wins).
    def note_progress(self, round: int, detail: str) -> bool:
        return self._move(round, detail=detail)

    def mark_done(self, round: int, detail: str) -> bool:
        return self._move(round, state=UploadState.DONE, detail=detail)

    def mark_failed(self, round: int, detail: str, send_again: Sequence[str] = ()) -> bool:
        return self._move(round, state=UploadState.FAILED, detail=detail, send_again=list(send_again))

    def _move(self, round: int, **fields) -> bool:
        moved = CheckpointUpload.objects.filter(pk=self.pk, state=UploadState.FINISHING, round=round).update(
            updated_at=timezone.now(), **fields)
        for name, value in fields.items():
            setattr(self, name, value)
        return bool(moved)
