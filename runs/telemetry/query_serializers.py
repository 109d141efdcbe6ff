"""Query-string parameters of the telemetry endpoints; a bad one is a 400 that names it."""
from rest_framework import serializers

from runs.telemetry import metrics_query


class StepRangeQuery(serializers.Serializer):
    # A step_max below step_min is an empty range, answered with nothing, as any filter would.
    step_min = serializers.IntegerField(required=False, min_value=0, help_text="Only steps from this one.")
    step_max = serializers.IntegerField(required=False, min_value=0, help_text="Only steps up to this one.")


class MetricsQuery(StepRangeQuery):
    MAX_NAMES = 100

    names = serializers.CharField(required=False, allow_blank=True,
                                  help_text="Comma-separated metric names; all when omitted or empty.")
    max_points = serializers.IntegerField(required=False, min_value=2, max_value=metrics_query.MAX_POINTS_LIMIT,
                                          default=metrics_query.DEFAULT_MAX_POINTS)
    earlier_attempts = serializers.BooleanField(
        required=False, default=False,
        help_text="Also the values of earlier attempts at steps the run trained again after a resume "
                  "(`earlier_attempts`: per name, step, value and attempt); the series hold the latest.")

    def validate_names(self, value) -> list[str]:
        names = [name.strip() for name in value.split(",") if name.strip()]
        if len(names) > self.MAX_NAMES:
            raise serializers.ValidationError(f"at most {self.MAX_NAMES} names per request, got {len(names)}")
        return names


# Why an episode ended (worker.trainer.events.SampleRecord.end_reason); one-shot samples have none.
END_REASONS = ["done", "max_turns", "max_tokens", "context", "environment_error", "environment_timeout"]


class SamplesQuery(StepRangeQuery):
    step = serializers.IntegerField(required=False, min_value=0, help_text="Only this step.")
    end_reason = serializers.ChoiceField(
        END_REASONS, required=False, help_text="Only episodes that ended this way (multi-turn rollouts).",
        error_messages={"invalid_choice": f'"{{input}}" is not an end reason; one of: {", ".join(END_REASONS)}.'})


LOG_LEVELS = ["debug", "info", "warning", "error"]  # in rising order


class LogsQuery(serializers.Serializer):
    after = serializers.IntegerField(required=False, min_value=0, default=0, help_text="Only lines with a larger id.")
    level = serializers.ChoiceField(LOG_LEVELS, required=False, help_text="Only lines at this level or above.")
    # A field named `source`: DRF's metaclass takes it out of the class; the stubs see Field.source.
    source = serializers.CharField(  # type: ignore[assignment]
        required=False, max_length=40, help_text="Only lines from this source.")


def parsed(query_class, request) -> dict:
    query = query_class(data=request.query_params)
    query.is_valid(raise_exception=True)
    return query.validated_data
