"""A checkpoint a run saved and the control plane listed: its step, its files and where they are kept."""
from django.db import models


class Checkpoint(models.Model):
    run = models.ForeignKey("runs.Run", on_delete=models.CASCADE, related_name="checkpoints")
    step = models.PositiveIntegerField()
    path = models.CharField(max_length=1000)  # where the worker wrote it
    size_bytes = models.PositiveBigIntegerField(default=0)
    model_version = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField()
    # Uploaded whole to the control plane's store (runs/artifacts/checkpoint_store.py): it can be
    # downloaded, and resumed from, wherever the worker ran.
    in_store = models.BooleanField(default=False)
    # The uploaded files as the worker's manifest gave them ({path, size, sha256}, checked on
    # arrival): a worker resuming from the checkpoint checks what it fetched against them.
    # Empty for a checkpoint not uploaded, or uploaded before they were kept.
    files = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["step"]
        constraints = [models.UniqueConstraint(fields=["run", "step"], name="checkpoint_once_per_step")]
