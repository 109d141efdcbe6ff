from django.contrib import admin

from runs.models import Checkpoint, Dataset, LogLine, MetricPoint, RewardFunction, Run, RunReward, Sample, TrainingConfig


class OwnedAdmin(admin.ModelAdmin):
    """Admin lists go through the same visibility rule as the API (staff see everything)."""

    def get_queryset(self, request):
        return self.model.objects.visible_to(request.user).select_related("owner")


@admin.register(Dataset)
class DatasetAdmin(OwnedAdmin):
    list_display = ["name", "owner", "source", "prompt_column", "prompt_format", "row_count", "created_at"]
    list_filter = ["source", "prompt_format"]
    search_fields = ["name", "hub_id", "generator"]
    readonly_fields = ["columns", "row_count", "preview", "prompt_format", "file_format"]


@admin.register(RewardFunction)
class RewardFunctionAdmin(OwnedAdmin):
    list_display = ["name", "owner", "kind", "builtin", "created_at"]
    list_filter = ["kind", "builtin"]
    search_fields = ["name"]


@admin.register(TrainingConfig)
class TrainingConfigAdmin(OwnedAdmin):
    list_display = ["name", "owner", "created_at"]
    search_fields = ["name"]


class RunRewardInline(admin.TabularInline):
    model = RunReward
    extra = 0


class CheckpointInline(admin.TabularInline):
    model = Checkpoint
    extra = 0
    readonly_fields = ["step", "path", "size_bytes", "model_version", "created_at"]
    can_delete = False


@admin.register(Run)
class RunAdmin(OwnedAdmin):
    list_display = ["name", "owner", "status", "dataset", "current_step", "attempt", "created_at"]
    list_filter = ["status", "owner"]
    search_fields = ["name"]
    inlines = [RunRewardInline, CheckpointInline]
    readonly_fields = ["status", "cancel_requested", "attempt", "current_step", "last_heartbeat_at",
                       "queued_at", "started_at", "finished_at", "launch_spec", "error_message"]
    exclude = ["ingest_token_hash"]


class RunChildAdmin(admin.ModelAdmin):
    """Telemetry is written by workers; the admin only reads it."""
    list_select_related = ["run"]

    def get_queryset(self, request):
        return super().get_queryset(request).filter(run__in=Run.objects.visible_to(request.user))

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(MetricPoint)
class MetricPointAdmin(RunChildAdmin):
    list_display = ["run", "name", "step", "value", "time"]
    search_fields = ["name"]


@admin.register(Sample)
class SampleAdmin(RunChildAdmin):
    list_display = ["run", "step", "group", "total_reward", "advantage", "model_version", "staleness"]


@admin.register(LogLine)
class LogLineAdmin(RunChildAdmin):
    list_display = ["run", "time", "level", "source", "message"]
    list_filter = ["level"]


@admin.register(Checkpoint)
class CheckpointAdmin(RunChildAdmin):
    list_display = ["run", "step", "path", "size_bytes", "created_at"]
