"""What a dry run is asked: rows of a dataset with typed completions, or a finished run's samples."""
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from runs.api.serializers.fields import VisiblePrimaryKeyField
from runs.models import Dataset, Run

MAX_ROWS = 32
MAX_COMPLETIONS_PER_ROW = 16
MAX_COMPLETION_CHARS = 20_000
DEFAULT_SAMPLE_ROWS = 8


@extend_schema_field({"oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]})
class CompletionsOfRow(serializers.Field):
    """One completion (a string) or several (a list of strings) for one row."""

    default_error_messages = {
        "type": "each entry must be a completion (text) or a list of completions",
        "empty": "give at least one completion for each row",
        "too_many": f"at most {MAX_COMPLETIONS_PER_ROW} completions per row",
        "too_long": f"a completion may be at most {MAX_COMPLETION_CHARS} characters",
    }

    def to_internal_value(self, data):
        completions = [data] if isinstance(data, str) else data
        if not isinstance(completions, list) or not all(isinstance(c, str) for c in completions):
            self.fail("type")
        if not completions:
            self.fail("empty")
        if len(completions) > MAX_COMPLETIONS_PER_ROW:
            self.fail("too_many")
        if any(len(c) > MAX_COMPLETION_CHARS for c in completions):
            self.fail("too_long")
        return completions

    def to_representation(self, value):
        return value


class DryRunRequest(serializers.Serializer):
    dataset = VisiblePrimaryKeyField(queryset=Dataset.objects.all(), required=False,
                                     help_text="Dataset whose first rows are scored (default: the run's).")
    rows = serializers.IntegerField(required=False, min_value=1, max_value=MAX_ROWS,
                                    help_text=f"How many rows (at most {MAX_ROWS}).")
    completions = serializers.ListField(child=CompletionsOfRow(), required=False, min_length=1, max_length=MAX_ROWS,
                                        help_text="Per row: a completion or a list of them.")
    run = VisiblePrimaryKeyField(queryset=Run.objects.all(), required=False,
                                 help_text="Take the completions this run logged at `step`.")
    step = serializers.IntegerField(required=False, min_value=0)

    def validate(self, attrs):
        typed, run = "completions" in attrs, attrs.get("run")
        if typed == (run is not None):
            raise serializers.ValidationError(
                {"completions": "give either completions (one entry per row) or a run and a step"})
        if run is not None:
            return self._from_run(attrs, run)
        if "dataset" not in attrs:
            raise serializers.ValidationError({"dataset": "choose the dataset whose rows the completions answer"})
        count = len(attrs["completions"])
        if attrs.setdefault("rows", count) != count:
            raise serializers.ValidationError(
                {"completions": f"{count} entries for {attrs['rows']} rows; give one entry per row"})
        return attrs

    def _from_run(self, attrs, run):
        if "step" not in attrs:
            raise serializers.ValidationError({"step": "choose the step whose samples are scored"})
        attrs.setdefault("dataset", run.dataset)
        attrs.setdefault("rows", DEFAULT_SAMPLE_ROWS)
        return attrs
