"""What an environment's dry run is asked: a dataset row, and typed assistant turns or the model."""
from rest_framework import serializers

from runs.api.serializers.fields import StrictCharField, VisiblePrimaryKeyField
from runs.environments.dry_run import MAX_TURNS
from runs.models import Dataset
from worker.trainer.config import DEFAULT_MODEL

MAX_ROW = 999
MAX_TURN_CHARS = 20_000
DEFAULT_TURNS = 4


class EnvironmentDryRunRequest(serializers.Serializer):
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
