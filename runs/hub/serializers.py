"""A push to the Hugging Face Hub: what a request asks for, and the push as the API shows it."""
from huggingface_hub.errors import HFValidationError
from huggingface_hub.utils import validate_repo_id
from rest_framework import serializers

from runs.artifacts.export import PARTS
from runs.hub.models import HubPush
from runs.web.fields import StrictRequestSerializer


class PushToHubSerializer(StrictRequestSerializer):
    repo_id = serializers.CharField(max_length=96, help_text=(
        "The Hub repository to push to, as owner/name (a user or an organization, then the model's name); "
        "created when it does not exist."))
    token = serializers.CharField(write_only=True, style={"input_type": "password"}, help_text=(
        "A Hugging Face access token with write access to the owner's repositories. Used for this push only: "
        "never stored, logged or returned."))
    part = serializers.ChoiceField(choices=PARTS, default="model", help_text=(
        "model (default): ready to serve, without the optimizer state (a LoRA run's merged model, in its last "
        "checkpoint); adapter: a LoRA adapter with its tokenizer; all: the whole checkpoint."))
    private = serializers.BooleanField(default=True, help_text=(
        "Create the repository as private (the default). A repository that exists keeps its visibility."))

    def validate_repo_id(self, value: str) -> str:
        owner, _, name = value.partition("/")
        if value.count("/") != 1 or not owner or not name:
            raise serializers.ValidationError(f"must be owner/name, such as my-user/my-model, not {value!r}")
        try:
            validate_repo_id(value)
        except HFValidationError as exc:
            raise serializers.ValidationError(str(exc)) from None
        return value


class HubPushSerializer(serializers.ModelSerializer):
    step = serializers.IntegerField(source="checkpoint.step", read_only=True)
    requested_by = serializers.CharField(source="requested_by.username", read_only=True, allow_null=True,
                                         help_text="Who asked for the push; null once that user is deleted.")

    class Meta:
        model = HubPush
        fields = ["id", "run", "checkpoint", "step", "repo_id", "part", "private", "status", "detail",
                  "commit_url", "requested_by", "created_at", "finished_at",
                  "files_total", "files_done", "bytes_total", "bytes_done"]
        read_only_fields = fields
        extra_kwargs = {
            "files_total": {"help_text": "How many files the push sends (the part's files)."},
            "files_done": {"help_text": "How many of them the Hub has, or (small ones) are ready for the commit."},
            "bytes_total": {"help_text": "Their size in bytes."},
            "bytes_done": {"help_text": "The bytes of the files done."},
        }
