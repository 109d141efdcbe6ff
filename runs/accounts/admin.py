"""What every admin page of the control plane shares: an object's owner decides who sees it,
and a run's rows are seen by whoever sees the run."""
from django.contrib import admin

from runs.training_runs.models import Run


class OwnedAdmin(admin.ModelAdmin):
    """Admin lists go through the same visibility rule as the API (staff see everything)."""

    def get_queryset(self, request):
        return self.model.objects.visible_to(request.user).select_related("owner")


class RunChildAdmin(admin.ModelAdmin):
    """Telemetry is written by workers; the admin only reads it."""
    list_select_related = ["run"]

    def get_queryset(self, request):
        return super().get_queryset(request).filter(run__in=Run.objects.visible_to(request.user))

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
