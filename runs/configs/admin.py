"""Training configs in the admin."""
from django.contrib import admin

from runs.accounts.admin import OwnedAdmin
from runs.configs.models import TrainingConfig


@admin.register(TrainingConfig)
class TrainingConfigAdmin(OwnedAdmin):
    list_display = ["name", "owner", "created_at"]
    search_fields = ["name"]
