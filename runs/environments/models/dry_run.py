"""A model-played dry run of an environment: what was asked, how far it got, and what it showed.

The model is loaded and played by the control plane's consumer (runs/environments/model_dry_run.py),
like a judge's or a reward model's dry run (runs/dry_runs/models.py). Typed turns need no model and
are still played within their request.
"""
from django.db import models

from runs.dry_runs.models import DONE, FAILED, LOADING, QUEUED, DryRun


class EnvironmentDryRunState(models.TextChoices):
    QUEUED = QUEUED, "Queued"
    LOADING = LOADING, "Loading the model"
    PLAYING = "playing", "Playing"
    DONE = DONE, "Done"
    FAILED = FAILED, "Failed"


class EnvironmentDryRun(DryRun):
    SUBJECT, WORKING, PROGRESS = "environment", EnvironmentDryRunState.PLAYING, "turn"

    environment = models.ForeignKey("runs.Environment", on_delete=models.CASCADE, related_name="dry_runs")
    # asked: the validated request and the row it opens with: {dataset, row, row_values,
    # prompt_column, model, max_turns, tool_call_format}.
    state = models.CharField(max_length=10, choices=EnvironmentDryRunState.choices,
                             default=EnvironmentDryRunState.QUEUED)
    turn = models.PositiveIntegerField(default=0, help_text="The assistant turn being played (1 is the first).")
    result = models.JSONField(null=True, blank=True, help_text="When done: what a typed dry run answers.")

    def working_text(self) -> str:
        return f"turn {self.turn} of {self.asked['max_turns']}"
