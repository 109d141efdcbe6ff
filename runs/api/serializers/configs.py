from pydantic import ValidationError as SchemaError
from rest_framework import serializers

from runs import config_values
from runs.api.serializers.fields import unique_name_for_owner
from runs.models import TrainingConfig
from worker.trainer.config import PRESETS, errors_by_field


def complete_config(*layers: dict) -> dict:
    """Defaults, then each layer on top (runs/config_values.py); a 400 per field otherwise."""
    try:
        return config_values.complete_config(*layers)
    except SchemaError as exc:
        raise serializers.ValidationError(errors_by_field(exc)) from None


class TrainingConfigSerializer(serializers.ModelSerializer):
    owner = serializers.CharField(source="owner.username", read_only=True)
    preset = serializers.ChoiceField(choices=sorted(PRESETS), write_only=True, required=False,
                                     help_text="Start from a preset; `values` override it.")
    values = serializers.DictField(required=False, help_text="Knobs to set; the rest take their defaults.")

    class Meta:
        model = TrainingConfig
        fields = ["id", "name", "owner", "description", "preset", "values", "created_at", "updated_at"]

    def validate_name(self, value):
        return unique_name_for_owner(self, TrainingConfig, value)

    def validate(self, attrs):
        base = self.instance.values if self.instance is not None else {}
        preset = PRESETS.get(attrs.pop("preset", None), {})
        try:
            attrs["values"] = complete_config(base, preset, attrs.get("values"))
        except serializers.ValidationError as exc:
            raise serializers.ValidationError({"values": exc.detail}) from None
        return attrs
