"""A model-played dry run of an environment: what was asked, how far it got, and what it showed.

The model is loaded and played by the control plane's consumer (runs/background/dry_runs.py),
never by the web process; the row is what the page polls (api/views/environments.py). Typed
turns need no model and are still played within their request.
"""
from django.conf import settings
from django.db import models

from runs.models.background_row import BackgroundRow


class DryRunState(models.TextChoices):
    QUEUED = "queued", "Queued"
    LOADING = "loading", "Loading the model"
    PLAYING = "playing", "Playing"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"


class EnvironmentDryRun(BackgroundRow, models.Model):
    DONE, FAILED = DryRunState.DONE, DryRunState.FAILED

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
        cls.make_room(user)
        return cls.objects.create(environment=environment, requested_by=user, asked=asked)

    def progress_text(self) -> str:
        """What the page shows while it waits: queued → loading the model → turn k of n → done."""
        if self.state == DryRunState.PLAYING:
            return f"turn {self.turn} of {self.asked['max_turns']}"
        return self.get_state_display().lower()

    # The consumer writes through these, finish() and fail() (background_row.py).
    def mark_loading(self) -> None:
        self._unfinished(state=DryRunState.LOADING)

    def mark_turn(self, turn: int) -> None:
        self._unfinished(state=DryRunState.PLAYING, turn=turn)
