"""A model-played dry run of an environment: what was asked, how far it got, and what it showed.

The model is loaded and played by the control plane's consumer (runs/background/dry_runs.py),
never by the web process; the row is what the page polls (api/views/environments.py). Typed
turns need no model and are still played within their request.
"""
from django.conf import settings
from django.db import models
from django.utils import timezone

KEPT_PER_USER = 20  # older finished dry runs of a user are removed as a new one is asked


class DryRunState(models.TextChoices):
    QUEUED = "queued", "Queued"
    LOADING = "loading", "Loading the model"
    PLAYING = "playing", "Playing"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"


FINISHED = (DryRunState.DONE, DryRunState.FAILED)


class EnvironmentDryRun(models.Model):
    environment = models.ForeignKey("runs.Environment", on_delete=models.CASCADE, related_name="dry_runs")
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    # The validated request and the row it opens with (read when it was asked): {dataset, row,
    # row_values, prompt_column, model, max_turns, tool_call_format}.
    asked = models.JSONField()
    state = models.CharField(max_length=10, choices=DryRunState.choices, default=DryRunState.QUEUED)
    turn = models.PositiveIntegerField(default=0, help_text="The assistant turn being played (1 is the first).")
    result = models.JSONField(null=True, blank=True, help_text="When done: what a typed dry run answers.")
    error = models.TextField(blank=True, help_text="When failed: why.")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self):
        return f"dry run {self.pk} of environment {self.environment_id} ({self.state})"

    @classmethod
    def ask(cls, environment, user, asked: dict) -> "EnvironmentDryRun":
        finished = cls.objects.filter(requested_by=user, state__in=FINISHED).values_list("pk", flat=True)
        cls.objects.filter(pk__in=list(finished[KEPT_PER_USER - 1:])).delete()
        return cls.objects.create(environment=environment, requested_by=user, asked=asked)

    @property
    def finished(self) -> bool:
        return self.state in FINISHED

    def progress_text(self) -> str:
        """What the page shows while it waits: queued → loading the model → turn k of n → done."""
        if self.state == DryRunState.PLAYING:
            return f"turn {self.turn} of {self.asked['max_turns']}"
        return self.get_state_display().lower()

    # The consumer writes through these. Each is one UPDATE of an unfinished row: a dry run
    # delivered twice finishes once, and one whose environment was deleted stays deleted.
    def mark_loading(self) -> None:
        self._unfinished(state=DryRunState.LOADING)

    def mark_turn(self, turn: int) -> None:
        self._unfinished(state=DryRunState.PLAYING, turn=turn)

    def finish(self, result: dict) -> None:
        self._unfinished(state=DryRunState.DONE, result=result)

    def fail(self, reason: str) -> None:
        self._unfinished(state=DryRunState.FAILED, error=reason)

    def _unfinished(self, **fields) -> None:
        EnvironmentDryRun.objects.filter(pk=self.pk).exclude(state__in=FINISHED).update(
            updated_at=timezone.now(), **fields)
        for name, value in fields.items():
            setattr(self, name, value)
