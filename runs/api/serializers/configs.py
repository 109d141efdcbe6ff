from pydantic import ValidationError as SchemaError
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from runs import config_values
from runs.api.serializers.fields import StrictTextModelSerializer, unique_name_for_owner
from runs.models import TrainingConfig
from worker.trainer.config import PRESETS, errors_by_field
from worker.trainer.config import TrainingConfig as ConfigSchema


def complete_config(*layers: dict) -> dict:
    """Defaults, then each layer on top (runs/config_values.py); a 400 per field otherwise."""
    try:
        return config_values.complete_config(*layers)
    except SchemaError as exc:
        raise serializers.ValidationError(errors_by_field(exc)) from None


def knob_schema() -> dict:
    """The OpenAPI schema of a config's `values`: every knob with its type and range, from the
    trainer's own schema; any other key is refused. Rules between knobs (a batch that holds
    whole groups, ...) are checked on save and named in the 400."""
    knobs = {}
    for name, spec in ConfigSchema.model_json_schema()["properties"].items():
        spec = {key: value for key, value in spec.items() if key not in ("title", "group", "default")}
        if variants := spec.pop("anyOf", None):
            (typed,) = [variant for variant in variants if variant.get("type") != "null"]
            spec = {**spec, **typed, "nullable": True}
        knobs[name] = spec
    return {"type": "object", "properties": knobs, "additionalProperties": False}


@extend_schema_field(knob_schema())
class KnobsField(serializers.DictField):
    """Knobs of a training config, by name."""


class TrainingConfigSerializer(StrictTextModelSerializer):
    owner = serializers.CharField(source="owner.username", read_only=True)
    preset = serializers.ChoiceField(choices=sorted(PRESETS), write_only=True, required=False,
                                     help_text="Start from a preset; `values` override it.")
    values = KnobsField(required=False, help_text="Knobs to set; the rest take their defaults.")

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

