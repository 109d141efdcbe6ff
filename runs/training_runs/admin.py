"""Runs in the admin: compared side by side, with their rewards, checkpoints and alarms inline."""
from django.contrib import admin, messages
from django.db.models import OuterRef, Subquery
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.html import format_html, format_html_join

from runs.accounts.admin import OwnedAdmin
from runs.accounts import authoring
from runs.accounts.authoring_admin import AuthoringAdmin
from runs.alarms.models import Alarm
from runs.checkpoints.models.checkpoint import Checkpoint
from runs.compare.fetch import step_bounds
from runs.compare.names import run_metric_names
from runs.compare.selection import MAX_RUNS, MIN_RUNS
from runs.telemetry.models import MetricPoint
from runs.training_runs.models import Run, RunReward
from worker.trainer.metric_names import ROLLOUT_REWARD_MEAN


class RunRewardInline(admin.TabularInline):
    model = RunReward
    extra = 0


class CheckpointInline(admin.TabularInline):
    model = Checkpoint
    extra = 0
    readonly_fields = ["step", "path", "size_bytes", "model_version", "created_at"]
    can_delete = False


class AlarmInline(admin.TabularInline):
    """What the run raised about its own signals (runs/alarms/): read only."""
    model = Alarm
    extra = 0
    fields = readonly_fields = ("step", "kind", "message", "values", "stopped_run", "created_at")
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False


class ModelFilter(admin.SimpleListFilter):
    """The model a run trains (config.model), among the runs this admin user sees."""
    title = "model"
    parameter_name = "model"

    def lookups(self, request, model_admin):
        models = (Run.objects.visible_to(request.user).order_by().values_list("config__model", flat=True).distinct())
        return [(name, name) for name in sorted(filter(None, models))]

    def queryset(self, request, queryset):
        return queryset.filter(config__model=self.value()) if self.value() else queryset


@admin.register(Run)
class RunAdmin(AuthoringAdmin, OwnedAdmin):
    # Pointing a run at a verifiers environment (or its rows) is using it: the same rule.
    authoring_refusal = staticmethod(authoring.run_refusal)
    list_display = ["name", "owner", "status", "dataset", "base_model", "steps", "best_reward", "created_at"]
    list_filter = ["status", "owner", ModelFilter]
    search_fields = ["name"]
    actions = ["compare_selected_runs"]
    inlines = [RunRewardInline, AlarmInline, CheckpointInline]
    readonly_fields = ["status", "cancel_requested", "attempt", "current_step", "last_heartbeat_at",
                       "queued_at", "started_at", "finished_at", "launch_spec", "error_message",
                       "telemetry_links", "latest_metrics"]
    exclude = ["ingest_token_hash"]

    def get_queryset(self, request):
        best = (MetricPoint.objects.filter(run=OuterRef("pk"), name=ROLLOUT_REWARD_MEAN)
                .order_by("-value").values("value")[:1])
        return super().get_queryset(request).select_related("dataset").annotate(best_reward=Subquery(best))

    @admin.display(description="model", ordering="config__model")
    def base_model(self, run):
        return run.config.get("model", "")

    @admin.display(description="steps", ordering="current_step")
    def steps(self, run):
        return f"{run.current_step} / {run.max_steps}" if run.max_steps else run.current_step

    @admin.display(description="best reward", ordering="best_reward")
    def best_reward(self, run):
        return "—" if run.best_reward is None else f"{run.best_reward:.4g}"

    @admin.action(description="Compare selected runs")
    def compare_selected_runs(self, request, queryset):
        ids = sorted(queryset.values_list("pk", flat=True))
        if not MIN_RUNS <= len(ids) <= MAX_RUNS:
            self.message_user(request, f"Select {MIN_RUNS} to {MAX_RUNS} runs to compare ({len(ids)} selected).",
                              messages.WARNING)
            return None
        return redirect(f"{reverse('page-compare')}?runs={','.join(map(str, ids))}")

    @admin.display(description="metrics and samples")
    def telemetry_links(self, run):
        if run.pk is None:
            return "—"
        links = [(reverse(f"admin:runs_{name}_changelist") + f"?run__id__exact={run.pk}", label)
                 for name, label in [("metricpoint", "metric points"), ("sample", "samples"), ("logline", "log lines")]]
        return format_html_join(" · ", '<a href="{}">{}</a>', links)

    @admin.display(description="latest metrics")
    def latest_metrics(self, run):
        if run.pk is None:
            return "—"
        names = run_metric_names(run.pk)
        bounds = step_bounds([run.pk], names)
        rows = [(name, bounds[run.pk, name].hi, f"{bounds[run.pk, name].last_value:.6g}")
                for name in names if (run.pk, name) in bounds]
        if not rows:
            return "none reported yet"
        body = format_html_join("", "<tr><td>{}</td><td>{}</td><td>{}</td></tr>", rows)
        return format_html("<table><thead><tr><th>metric</th><th>last step</th><th>value</th></tr></thead>"
                           "<tbody>{}</tbody></table>", body)
