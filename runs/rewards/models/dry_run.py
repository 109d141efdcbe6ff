"""A dry run of a judge or a reward model: the rows asked, how far it got, and each raw answer.

A judge served by the worker needs a vLLM server started for it, and a reward model a model
loaded: queued for the consumer (runs/rewards/model_dry_run.py), like an environment's dry run
played by the model (runs/dry_runs/models.py). Built-ins and code still score within their
request (runs/rewards/dry_run.py).
"""
from django.db import models

from runs.dry_runs.models import DONE, FAILED, LOADING, QUEUED, DryRun


class RewardDryRunState(models.TextChoices):
    QUEUED = QUEUED, "Queued"
    LOADING = LOADING, "Starting the model"
    SCORING = "scoring", "Scoring"
    DONE = DONE, "Done"
    FAILED = FAILED, "Failed"


class RewardDryRun(DryRun):
    SUBJECT, WORKING, PROGRESS = "reward", RewardDryRunState.SCORING, "rows_done"

    reward = models.ForeignKey("runs.RewardFunction", on_delete=models.CASCADE, related_name="dry_runs")
    # asked: the validated request and the rows it scores (runs/rewards/rows.py).
    state = models.CharField(max_length=10, choices=RewardDryRunState.choices, default=RewardDryRunState.QUEUED)
    rows_done = models.PositiveIntegerField(default=0)
    rows_total = models.PositiveIntegerField(default=0)
    result = models.JSONField(null=True, blank=True, help_text="When done: what a built-in's dry run answers, "
                                                               "with each judge's raw answer.")

    def working_text(self) -> str:
        return f"scoring: row {self.rows_done} of {self.rows_total}"
