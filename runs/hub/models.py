"""A push of a checkpoint to the Hugging Face Hub: what was asked, and how it went.

The row is the truth a page or a script polls: the push itself runs on the control plane's
background queue (runs/hub/push.py) and writes its progress here, files and bytes. The
token the push used is never stored: it travels sealed in the task's message (runs/background/
sealed.py) and lives in clear only in the memory of the consumer doing that push.
"""
from datetime import timedelta

from django.conf import settings
from django.db import models
from django.utils import timezone

from runs.artifacts.export import PARTS

# A push still `pushing` this long after it was asked no longer holds one of its user's places
# (runs/background/limits.py): its sealed token stops opening after as long (TOKEN_MAX_AGE_S in
# runs/hub/push.py), so its message, if ever delivered, only fails it.
COUNTED_FOR = timedelta(hours=24)


class HubPushStatus(models.TextChoices):
    PUSHING = "pushing", "Pushing"
    PUSHED = "pushed", "Pushed"
    FAILED = "failed", "Failed"


class HubPush(models.Model):
    run = models.ForeignKey("runs.Run", on_delete=models.CASCADE, related_name="hub_pushes")
    checkpoint = models.ForeignKey("runs.Checkpoint", on_delete=models.CASCADE, related_name="hub_pushes")
    repo_id = models.CharField(max_length=96, help_text="owner/name on the Hub.")
    part = models.CharField(max_length=10, choices=[(part, part) for part in PARTS])
    private = models.BooleanField(default=True, help_text="Only for a repository the push creates.")
    status = models.CharField(max_length=10, choices=HubPushStatus.choices, default=HubPushStatus.PUSHING)
    detail = models.TextField(blank=True, help_text="Progress while pushing; what went wrong when failed.")
    commit_url = models.URLField(max_length=500, blank=True)
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL,
                                     related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # Progress: what the push sends, known when it is asked for, and how much is on the Hub's side
    # (a big file counts once uploaded, a small one once read; the commit then sends the small ones).
    files_total = models.PositiveIntegerField(default=0)
    files_done = models.PositiveIntegerField(default=0)
    bytes_total = models.PositiveBigIntegerField(default=0)
    bytes_done = models.PositiveBigIntegerField(default=0)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self):
        return f"{self.repo_id} ← run {self.run_id} ({self.status})"

    @classmethod
    def unfinished_of(cls, user):
        """The user's pushes queued or under way (asked within COUNTED_FOR)."""
        return cls.objects.filter(requested_by=user, status=HubPushStatus.PUSHING,
                                  created_at__gte=timezone.now() - COUNTED_FOR)

    # The push writes through these while it runs. Each is one UPDATE of the fields it changes,
    # which does nothing once the run (and so this row) has been deleted under it.
    def note_progress(self, detail: str) -> None:
        self._write(detail=detail)

    def note_sent(self, files_done: int, bytes_done: int, detail: str) -> None:
        self._write(files_done=files_done, bytes_done=bytes_done, detail=detail)

    def mark_pushed(self, commit_url: str, detail: str) -> None:
        self._finish(status=HubPushStatus.PUSHED, detail=detail, commit_url=commit_url)

    def mark_failed(self, reason: str) -> None:
        self._finish(status=HubPushStatus.FAILED, detail=reason)

    def _finish(self, **fields) -> None:
        if self.status != HubPushStatus.PUSHING:
            raise ValueError(f"push {self.pk} is {self.status} already")
        self._write(finished_at=timezone.now(), **fields)

    def _write(self, **fields) -> None:
        for name, value in fields.items():
            setattr(self, name, value)
        HubPush.objects.filter(pk=self.pk).update(**fields)
