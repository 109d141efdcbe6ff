"""What a reward's dry run is asked (rows of a dataset with typed completions, or a finished run's
samples), and how a judge's or a reward model's, queued for the consumer, is shown while it scores."""
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from runs.datasets.models import Dataset
from runs.dry_runs.serializers import DryRunStatus, progress_field, result_field
from runs.rewards.models.dry_run import RewardDryRun, RewardDryRunState
from runs.rewards.models.function import RewardFunction
from runs.training_runs.models import Run
from runs.web.fields import StrictRequestSerializer, VisiblePrimaryKeyField

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


class DryRunRequest(StrictRequestSerializer):
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


class RewardDryRunStatus(DryRunStatus):
    """A judge's or a reward model's dry run as its page polls it: queued → loading → scoring (row k of n) →
    done/failed."""
    status_route = "rewardfunction-dry-run-status"
    progress = progress_field("In words: queued, starting the judge's model, scoring: row 2 of 4, done, failed.")
    result = result_field(
        "When done: what a built-in's dry run answers (rows with their completions and scores); a judge's rows "
        "add `answers`, per completion: its raw answer, the number parsed from it (`value`), any error, whether "
        "the cache answered, and seconds.")

    class Meta:
        model = RewardDryRun
        fields = ["id", "url", "reward", "state", "progress", "rows_done", "rows_total", "result", "error",
                  "created_at", "updated_at"]
        read_only_fields = fields

    def get_progress(self, dry_run) -> str:
        if dry_run.state != RewardDryRunState.LOADING:
            return dry_run.progress_text()
        params = dry_run.reward.params or {}
        if dry_run.reward.kind == RewardFunction.Kind.REWARD_MODEL:
            return "loading the reward model"
        if params.get("endpoint", "served") == "served":
            return "starting the judge's model"
        return "checking the judge's endpoint"
