from rest_framework import serializers

from runs.models import Checkpoint, LogLine, Sample


class SampleSerializer(serializers.ModelSerializer):
    class Meta:
        model = Sample
        fields = ["id", "step", "group", "prompt", "completion", "rewards", "total_reward", "advantage",
                  "model_version", "staleness", "num_tokens", "finish_reason"]


class LogLineSerializer(serializers.ModelSerializer):
    class Meta:
        model = LogLine
        fields = ["id", "time", "level", "source", "message"]


class CheckpointSerializer(serializers.ModelSerializer):
    class Meta:
        model = Checkpoint
        fields = ["id", "step", "path", "size_bytes", "model_version", "created_at", "in_store"]
