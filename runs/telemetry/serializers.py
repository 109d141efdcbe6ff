from rest_framework import serializers

from runs.checkpoints.models.checkpoint import Checkpoint
from runs.telemetry.models import LogLine, Sample


class ToolCallSerializer(serializers.Serializer):
    name = serializers.CharField()
    arguments = serializers.CharField()


class SampleTurnSerializer(serializers.Serializer):
    """One message of an episode (worker.trainer.events.SampleTurn)."""
    role = serializers.ChoiceField(choices=["system", "user", "assistant", "tool"])
    content = serializers.CharField()
    tool_calls = ToolCallSerializer(many=True)
    trained = serializers.BooleanField(help_text="Sampled and in the loss; other tokens are masked out.")
    model_version = serializers.IntegerField(allow_null=True)
    num_tokens = serializers.IntegerField()
    error = serializers.CharField(allow_blank=True)


class SampleSerializer(serializers.ModelSerializer):
    turns = SampleTurnSerializer(many=True, allow_null=True, read_only=True,
                                 help_text="The episode of a multi-turn rollout; null for a one-shot prompt.")

    class Meta:
        model = Sample
        fields = ["id", "step", "group", "prompt", "completion", "rewards", "total_reward", "advantage",
                  "model_version", "staleness", "num_tokens", "finish_reason", "turns", "end_reason", "judgements"]


class LogLineSerializer(serializers.ModelSerializer):
    class Meta:
        model = LogLine
        fields = ["id", "time", "level", "source", "message"]


class CheckpointSerializer(serializers.ModelSerializer):
    class Meta:
        model = Checkpoint
        fields = ["id", "step", "path", "size_bytes", "model_version", "created_at", "in_store"]
