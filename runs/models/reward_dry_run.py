"""A dry run of a judge or a reward model: the rows asked, how far it got, and each raw answer.

A judge served by the worker needs a vLLM server started for it, and a reward model a model
loaded: minutes on a CPU, never inside a request. The control plane's consumer does it
(runs/background/), the page and the API poll this row. Built-ins and code still score within
their request (runs/rewards/dry_run.py).
"""
from django.conf import settings
from django.db import models

from runs.models.background_row import BackgroundRow


class RewardDryRunState(models.TextChoices):
    QUEUED = "queued", "Queued"
    LOADING = "loading", "Starting the model"
    SCORING = "scoring", "Scoring"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"


class RewardDryRun(BackgroundRow, models.Model):
    DONE, FAILED = RewardDryRunState.DONE, RewardDryRunState.FAILED

    reward = models.ForeignKey("runs.RewardFunction", on_delete=models.CASCADE, related_name="dry_runs")
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    # The validated request and the rows it scores, read when it was asked (runs/rewards/rows.py).
    asked = models.JSONField()
    state = models.CharField(max_length=10, choices=RewardDryRunState.choices, default=RewardDryRunState.QUEUED)
    rows_done = models.PositiveIntegerField(default=0)
    rows_total = models.PositiveIntegerField(default=0)
    result = models.JSONField(null=True, blank=True, help_text="When done: what a built-in's dry run answers, "
                                                               "with each judge's raw answer.")
    error = models.TextField(blank=True, help_text="When failed: why.")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self):
        return f"dry run {self.pk} of reward {self.reward_id} ({self.state})"

    @classmethod
    def ask(cls, reward, user, asked: dict, rows_total: int) -> "RewardDryRun":
        cls.make_room(user)
        return cls.objects.create(reward=reward, requested_by=user, asked=asked, rows_total=rows_total)

    def progress_text(self) -> str:
        if self.state == RewardDryRunState.SCORING:
            return f"scoring: row {self.rows_done} of {self.rows_total}"
        return self.get_state_display().lower()

    # The consumer writes through these, finish() and fail() (background_row.py).
    def mark_loading(self) -> None:
        self._unfinished(state=RewardDryRunState.LOADING)

    def mark_rows_done(self, rows_done: int) -> None:
        self._unfinished(state=RewardDryRunState.SCORING, rows_done=rows_done)
