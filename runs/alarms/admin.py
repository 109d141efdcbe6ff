"""Alarms in the admin."""
from django.contrib import admin

from runs.accounts.admin import RunChildAdmin
from runs.alarms.models import Alarm


@admin.register(Alarm)
class AlarmAdmin(RunChildAdmin):
    list_display = ["run", "step", "kind", "message", "stopped_run", "created_at"]
    list_filter = ["kind", "stopped_run"]
