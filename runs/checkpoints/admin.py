"""Checkpoints in the admin."""
from django.contrib import admin

from runs.accounts.admin import RunChildAdmin
from runs.checkpoints.models.checkpoint import Checkpoint


@admin.register(Checkpoint)
class CheckpointAdmin(RunChildAdmin):
    list_display = ["run", "step", "path", "size_bytes", "created_at"]
