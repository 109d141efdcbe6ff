from functools import cache

from drf_spectacular.utils import extend_schema_field
from pydantic import ValidationError as SchemaError
from rest_framework import serializers

from runs.checkpoints.starting import init_checkpoint_problem
from runs.configs import values as config_values
from runs.configs.models import TrainingConfig
from runs.web.fields import StrictTextModelSerializer, unique_name_for_owner
from worker.trainer.config import PRESETS, errors_by_field
from worker.trainer.config import TrainingConfig as ConfigSchema
from worker.trainer.for_control_plane.machine import problems_here
from worker.trainer.models.paths import model_problem


def complete_config(*layers: dict, user=None) -> dict:
    """Defaults, then each layer on top (runs/configs/values.py); a 400 per field otherwise.
    The schema leaves to the control plane what a user may name: the model (names, not paths:
    worker/trainer/models/paths.py) and the checkpoint to start from (one `user` may see)."""
    try:
        values = config_values.complete_config(*layers)
    except SchemaError as exc:
        raise serializers.ValidationError(errors_by_field(exc)) from None
    if problems := naming_problems(values, user):
        raise serializers.ValidationError(problems)
    # What the model on this machine allows (its family, its LoRA layers): outside the schema,
    # which answers the same everywhere (worker/trainer/machine_checks.py).
    if here := problems_here(ConfigSchema.model_validate(values)):
        raise serializers.ValidationError({field: [message] for field, message in here})
    return values


def request_user(serializer):
    return getattr(serializer.context.get("request"), "user", None)


def naming_problems(values: dict, user) -> dict[str, list[str]]:
    problems = {}
    if problem := model_problem(values["model"]):
        problems["model"] = [problem]
    if problem := init_checkpoint_problem(values, user):
        problems["init_checkpoint"] = [problem]
    return problems


@cache
def knob_schema() -> dict:
    """The OpenAPI schema of a config's `values`: every knob with its type and range, from the
    trainer's own schema; any other key is refused. Rules between knobs (a batch that holds
    whole groups, ...) are checked on save and named in the 400."""
    knobs = {}
    for name, spec in ConfigSchema.model_json_schema()["properties"].items():
        spec = {key: value for key, value in spec.items() if key not in ("title", "group", "default")}
        if variants := spec.pop("anyOf", None):
            typed = [variant for variant in variants if variant.get("type") != "null"]
            nullable = {"nullable": True} if len(typed) < len(variants) else {}
            # X | None is X, nullable; a cap or "auto" (max_inflight_tasks) stays a choice of both.
            spec = ({**spec, **typed[0], **nullable} if len(typed) == 1
                    else {**spec, "anyOf": [as_openapi_30(variant) for variant in typed], **nullable})
        knobs[name] = as_openapi_30(spec)
    return {"type": "object", "properties": knobs, "additionalProperties": False}


def as_openapi_30(spec: dict) -> dict:
    """JSON Schema's exclusive numeric bounds and constants as OpenAPI 3.0 writes them."""
    spec = dict(spec)
    if "const" in spec:
        spec["enum"] = [spec.pop("const")]
    for bound, inclusive in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
        if bound in spec:
            spec[inclusive], spec[bound] = spec[bound], True
    return spec


JSON_TYPES: dict[str, tuple[type, ...]] = {"integer": (int,), "number": (int, float), "string": (str,),
                                           "boolean": (bool,)}


@extend_schema_field(knob_schema())
class KnobsField(serializers.DictField):
    """Knobs of a training config, by name. Sent as JSON, each must have its JSON type: the
    trainer's schema would read `true` as 1.0 and "8" as 8, which a JSON client did not mean
    (a page's form sends text, which that schema reads)."""

    def to_internal_value(self, data):
        values = super().to_internal_value(data)
        request = self.context.get("request")
        if not getattr(request, "content_type", "").startswith("application/json"):
            return values
        knobs = knob_schema()["properties"]
        wrong = {name: [f"must be {_type_words(knobs[name])}{' or null' if knobs[name].get('nullable') else ''}"]
                 for name, value in values.items() if name in knobs and not _of_type(value, knobs[name])}
        if wrong:
            raise serializers.ValidationError(wrong)
        return values


def _type_words(knob: dict) -> str:
    """integer; or for a choice (max_inflight_tasks), each variant, a constant as itself: integer or "auto"."""
    if "anyOf" not in knob:
        return str(knob.get("type"))
    return " or ".join(" or ".join(f'"{choice}"' for choice in v["enum"]) if "enum" in v else str(v.get("type"))
                       for v in knob["anyOf"])


def _of_type(value, knob: dict) -> bool:
    if value is None:
        return bool(knob.get("nullable"))
    if "anyOf" in knob:  # a choice: one of its constants, or a value of its other type
        return any(value in v["enum"] if "enum" in v else _of_type(value, v) for v in knob["anyOf"])
    if isinstance(value, bool) and knob.get("type") != "boolean":
        return False
    return isinstance(value, JSON_TYPES.get(knob.get("type", ""), (object,)))


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
            attrs["values"] = complete_config(base, preset, attrs.get("values"), user=request_user(self))
        except serializers.ValidationError as exc:
            raise serializers.ValidationError({"values": exc.detail}) from None
        return attrs


class ConfigPresetSerializer(serializers.Serializer):
    """A preset a config may start from (`preset` on create and update), with the knobs it sets."""
    name = serializers.CharField(help_text="What `preset` takes.")
    values = serializers.DictField(help_text="The knobs it sets; the rest take their defaults.")


def config_presets() -> list[dict]:
    return [{"name": name, "values": PRESETS[name]} for name in sorted(PRESETS)]
