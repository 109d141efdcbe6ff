"""An alarm a run raised: its kind, the step, what was seen, and whether it stopped the run."""
from django.db import models


class Alarm(models.Model):
    """A warning the run raised about its own signals (runs/alarms/), at the step that tripped it."""
    run = models.ForeignKey("runs.Run", on_delete=models.CASCADE, related_name="alarms")
    kind = models.CharField(max_length=40)  # a name of worker.trainer.config.ALARMS
    step = models.PositiveIntegerField()
    message = models.TextField()
    values = models.JSONField(default=dict, help_text="The numbers that tripped it.")
    stopped_run = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["step", "id"]
        indexes = [models.Index(fields=["run", "kind", "step"], name="alarm_run_kind_step")]
