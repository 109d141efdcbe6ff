"""What an environment's dry run is asked (a dataset row, and typed assistant turns or the model),
and how a model-played one, queued for the consumer, is shown while it plays."""
from rest_framework import serializers

from runs.datasets.models import Dataset
from runs.dry_runs.serializers import DryRunStatus, progress_field, result_field
from runs.environments.dry_run import MAX_TURNS
from runs.environments.models.dry_run import EnvironmentDryRun
from runs.web.fields import StrictCharField, StrictRequestSerializer, VisiblePrimaryKeyField
from worker.trainer.config import DEFAULT_MODEL

MAX_ROW = 999
MAX_TURN_CHARS = 20_000
DEFAULT_TURNS = 4


class EnvironmentDryRunRequest(StrictRequestSerializer):
    dataset = VisiblePrimaryKeyField(queryset=Dataset.objects.all(), required=False,
                                     help_text="Dataset whose row opens the episode (default: the environment's).")
    row = serializers.IntegerField(required=False, default=0, min_value=0, max_value=MAX_ROW,
                                   help_text="Which row (0 is the first).")
    turns = serializers.ListField(
        child=StrictCharField(allow_blank=True, trim_whitespace=False, max_length=MAX_TURN_CHARS),
        required=False, min_length=1, max_length=MAX_TURNS,
        help_text="The assistant's turns, in order, as the model would write them (tool calls included). "
                  "Leave out to let the model play.")
    model = StrictCharField(required=False, default=DEFAULT_MODEL, max_length=500,
                            help_text="The model that plays when no turns are typed: one prepared on this machine.")
    max_turns = serializers.IntegerField(required=False, default=DEFAULT_TURNS, min_value=1, max_value=MAX_TURNS,
                                         help_text="Assistant turns before the episode is stopped.")
    tool_call_format = serializers.ChoiceField(
        choices=["auto", "hermes", "text"], required=False, default="auto",
        help_text="How tool calls are written; auto: hermes where the model's chat template takes tools (typed "
                  "turns: where they contain <tool_call>), else text.")


class EnvironmentDryRunStatus(DryRunStatus):
    """A model-played dry run as its page polls it: queued → loading → playing (turn k of n) → done/failed."""
    status_route = "environment-dry-run-status"
    progress = progress_field("In words: queued, loading the model, turn 2 of 4, done, failed.")
    max_turns = serializers.SerializerMethodField()
    result = result_field(
        "When done: what a dry run with typed turns answers (the episode's turns, end reason, sandbox calls, "
        "rubric and reward).")

    class Meta:
        model = EnvironmentDryRun
        fields = ["id", "url", "environment", "state", "progress", "turn", "max_turns", "result", "error",
                  "created_at", "updated_at"]
        read_only_fields = fields

    def get_max_turns(self, dry_run) -> int:
        return dry_run.asked["max_turns"]
