"""The compare endpoints' query parameters (a bad one is a 400 that names it) and the shape
of their answers, for the OpenAPI schema."""
from rest_framework import serializers

from runs.compare.comparison import DEFAULT_POINTS
from runs.compare.selection import BadSelection, parse_run_ids
from runs.compare.series import X_AXES

MAX_METRICS = 24


class RunSelectionQuery(serializers.Serializer):
    runs = serializers.CharField(help_text="Comma-separated ids of the 2 to 8 runs to compare, such as 3,5,7.")

    def validate_runs(self, value) -> list[int]:
        try:
            return parse_run_ids(value)
        except BadSelection as exc:
            raise serializers.ValidationError(str(exc)) from None


class CompareQuery(RunSelectionQuery):
    metrics = serializers.CharField(
        required=False, allow_blank=True,
        help_text="Comma-separated metric names; when omitted, the usual GRPO metrics the runs reported.")
    x = serializers.ChoiceField(choices=list(X_AXES), default="step",
                                help_text="x axis: training step, wall time in seconds since the run started, "
                                          "or samples (completions) trained on.")
    points = serializers.IntegerField(required=False, min_value=10, max_value=5000, default=DEFAULT_POINTS,
                                      help_text="At most this many points per run and metric.")

    def validate_metrics(self, value) -> list[str]:
        names = list(dict.fromkeys(name.strip() for name in value.split(",") if name.strip()))
        if len(names) > MAX_METRICS:
            raise serializers.ValidationError(f"at most {MAX_METRICS} metrics per comparison, got {len(names)}")
        return names


class CompareSamplesQuery(RunSelectionQuery):
    step = serializers.IntegerField(required=False, min_value=0,
                                    help_text="Training step; each run shows its nearest logged step at or "
                                              "before it. Default: the last step all runs logged samples for.")


class SeriesSchema(serializers.Serializer):
    x = serializers.ListField(child=serializers.FloatField(), help_text="Shared x values, ascending.")
    values = serializers.DictField(
        child=serializers.ListField(child=serializers.FloatField(allow_null=True)),
        help_text="Per run id, one value per x (null where that run has no point).")
    missing = serializers.ListField(child=serializers.IntegerField(), help_text="Runs that never reported it.")
    downsampled = serializers.BooleanField(help_text="True when some points stand for several steps.")


class DiffFieldSchema(serializers.Serializer):
    field = serializers.CharField(help_text="Dotted path, such as config.learning_rate or rewards.acc.weight.")
    group = serializers.CharField()
    values = serializers.DictField(required=False, help_text="Differing fields: per run id (absent = not set).")
    value = serializers.JSONField(required=False, help_text="Equal fields: the value they share.")


class ConfigDiffSchema(serializers.Serializer):
    differing = DiffFieldSchema(many=True)
    equal = DiffFieldSchema(many=True)


class RunIdentitySchema(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    owner = serializers.CharField()
    status = serializers.CharField()
    url = serializers.CharField()


class RunSummarySchema(serializers.Serializer):
    run = serializers.IntegerField()
    name = serializers.CharField()
    status = serializers.CharField()
    steps = serializers.IntegerField()
    max_steps = serializers.IntegerField(allow_null=True)
    final_reward = serializers.FloatField(allow_null=True, help_text="Last rollout/reward_mean.")
    best_reward = serializers.FloatField(allow_null=True,
                                         help_text="Highest rollout/reward_mean at the comparison's resolution.")
    duration_s = serializers.FloatField(allow_null=True)
    tokens_per_s = serializers.FloatField(allow_null=True, help_text="Mean generation throughput.")


class ComparisonSchema(serializers.Serializer):
    x = serializers.CharField()
    x_label = serializers.CharField()
    points = serializers.IntegerField()
    runs = RunIdentitySchema(many=True)
    available_metrics = serializers.ListField(child=serializers.CharField())
    metrics = serializers.ListField(child=serializers.CharField())
    series = serializers.DictField(child=SeriesSchema(), help_text="Per metric name.")
    config_diff = ConfigDiffSchema()
    summary = RunSummarySchema(many=True)


class SamplesSideBySideSchema(serializers.Serializer):
    step = serializers.IntegerField(allow_null=True)
    steps = serializers.DictField(child=serializers.IntegerField(allow_null=True),
                                  help_text="Per run id, the logged step shown.")
    ranges = serializers.DictField(help_text="Per run id, [first, last] step with samples, or null.")
    prompts = serializers.ListField(child=serializers.DictField(),
                                    help_text="[{prompt, completions: {run id: [sample, ...]}}], shared prompts first.")
