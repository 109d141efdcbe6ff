"""What runs report, in the admin: metric points, samples, log lines."""
from django.contrib import admin
from django.utils.text import Truncator

from runs.accounts.admin import RunChildAdmin
from runs.telemetry.models import LogLine, MetricPoint, Sample


@admin.register(MetricPoint)
class MetricPointAdmin(RunChildAdmin):
    list_display = ["run", "name", "step", "value", "time"]
    search_fields = ["name"]
    # Runs report hundreds of thousands of points: counting them all on each page costs more than it tells.
    show_full_result_count = False


@admin.register(Sample)
class SampleAdmin(RunChildAdmin):
    list_display = ["run", "step", "group", "prompt_start", "completion_start", "total_reward", "advantage",
                    "model_version", "staleness"]
    search_fields = ["prompt", "completion"]

    @admin.display(description="prompt")
    def prompt_start(self, sample):
        return Truncator(sample.prompt).chars(80)

    @admin.display(description="completion")
    def completion_start(self, sample):
        return Truncator(sample.completion).chars(80)


@admin.register(LogLine)
class LogLineAdmin(RunChildAdmin):
    list_display = ["run", "time", "level", "source", "message"]
    list_filter = ["level"]
