"""The shape of `GET /api/runs/<id>/diagnosis/` for the OpenAPI schema (runs/diagnosis/engine.py
builds it; docs/capabilities/diagnosis.md says what each number means)."""
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from runs.diagnosis.bottleneck import BOTTLENECKS
from runs.diagnosis.time_split import OTHER, PARTS
from worker.trainer.metric_names import SYSTEM_STEP_TIME_S

ANY_KNOB_VALUE = {"description": "A knob's value: a number, a boolean, text or null, as the config holds it."}
MEAN = "Mean over the window's steps that logged it; null where none did (runs before the metric existed)."


@extend_schema_field({"oneOf": [{"type": "integer", "minimum": 1}, {"type": "string", "enum": ["auto"]}],
                      "description": "config.max_inflight_tasks: a fixed cap, or auto."})
class InflightCapField(serializers.JSONField):
    pass


@extend_schema_field(ANY_KNOB_VALUE)
class KnobValueField(serializers.JSONField):
    pass


# Each part with the metric it is read from. (One enum per part, not one for all: a property
# named "part" with an enum of its own would collide with the hub push's in the schema's enums.)
@extend_schema_field({"type": "string", "oneOf": [
    *({"enum": [part], "description": f"{metric}, mean per step"} for part, metric in PARTS.items()),
    {"enum": [OTHER], "description": f"{SYSTEM_STEP_TIME_S} less the parts above (never negative)"}]})
class TimePartField(serializers.CharField):
    pass


class DiagnosisTimePartSchema(serializers.Serializer):
    part = TimePartField()
    seconds = serializers.FloatField(help_text="Mean seconds per measured step.")
    share = serializers.FloatField(help_text="Of the mean step; the parts' shares sum to 1.")


class DiagnosisThroughputSchema(serializers.Serializer):
    generation_tokens_per_s = serializers.FloatField(allow_null=True, help_text=MEAN)
    training_tokens_per_s = serializers.FloatField(allow_null=True, help_text=MEAN)


class DiagnosisStalenessSchema(serializers.Serializer):
    dropped_groups = serializers.IntegerField(help_text="Groups dropped as too stale over the window.")
    dropped_share = serializers.FloatField(allow_null=True, help_text="Of the groups generated for the window's "
                                           "steps (trained or dropped); null with fewer than two logged steps.")
    max_staleness = serializers.IntegerField(help_text="config.max_staleness.")
    staleness_mean = serializers.FloatField(allow_null=True, help_text=MEAN)
    blocked_by_staleness = serializers.FloatField(
        allow_null=True, help_text="Share of submit polls the staleness bound held back. " + MEAN)


class DiagnosisQueueSchema(serializers.Serializer):
    fullness = serializers.FloatField(allow_null=True, help_text="Groups in flight over the cap, mean (0..1).")
    in_flight_mean = serializers.FloatField(allow_null=True, help_text=MEAN)
    queue_depth_mean = serializers.FloatField(allow_null=True, help_text=MEAN)
    max_inflight = InflightCapField()
    cap_mean = serializers.FloatField(allow_null=True, help_text="The cap in force (auto's too). " + MEAN)
    blocked_by_inflight_cap = serializers.FloatField(
        allow_null=True, help_text="Share of submit polls the in-flight cap held back. " + MEAN)


class DiagnosisSuggestionSchema(serializers.Serializer):
    knob = serializers.CharField(help_text="A config knob (docs/reference/config.md).")
    current = KnobValueField()
    proposed = KnobValueField()
    why = serializers.CharField(help_text="The numbers that led to it, and its cost.")
    also_set = serializers.DictField(child=KnobValueField(), help_text="Knobs changed with it, by name (a larger "
                                     "micro-batch with fewer accumulation steps keeps a step's batch); often empty.")


class DiagnosisSchema(serializers.Serializer):
    status = serializers.ChoiceField(["ok", "too_short"], help_text="too_short: fewer measured steps after the "
                                     "first than a diagnosis needs; no bottleneck, no suggestions.")
    steps_measured = serializers.IntegerField(help_text="Steps of the window with a step time.")
    window = serializers.ListField(child=serializers.IntegerField(), min_length=2, max_length=2, allow_null=True,
                                   help_text="[first step, last step] looked at; null before any step.")
    bottleneck = serializers.ChoiceField(list(BOTTLENECKS), allow_null=True)
    sentence = serializers.CharField(help_text="The bottleneck in plain words with its numbers, or why there is "
                                     "none yet.")
    time_split = DiagnosisTimePartSchema(many=True)
    step_seconds = serializers.FloatField(allow_null=True, help_text="Mean length of a measured step.")
    throughput = DiagnosisThroughputSchema()
    staleness = DiagnosisStalenessSchema()
    queue = DiagnosisQueueSchema()
    suggestions = DiagnosisSuggestionSchema(many=True, help_text="Each one a config the run's own validation takes.")
    evidence = serializers.DictField(child=serializers.FloatField(), help_text="The numbers behind the sentence, "
                                     "by name (shares, seconds, rates); those the run did not log left out.")
