"""Form fields generated from a pydantic schema: the training config's knobs, grouped, each
with its default and one-line help, and the same for a dataset generator's parameters.

The schema stays the only definition of a knob: this module reads types, defaults and help from
it and never lists fields by hand. Validation is the schema's too; the form only turns what was
typed into the raw values the schema validates. Used by the config pages and the new-run page
("edit a copy inline"):

    groups = config_field_groups(values, errors)          # -> template context
    {% include "library/configs/_fields.html" with groups=groups %}
    raw = config_values_from_form(request.POST)           # -> serializer / schema
    values, errors = validated_config(raw)                 # or TrainingConfigSerializer
"""
import types
import typing
from dataclasses import dataclass, field

from pydantic import BaseModel, ValidationError

from runs.configs.values import complete_config
from worker.trainer.config import GROUPS, PRESETS, TrainingConfig, errors_by_field, field_groups
from worker.trainer.for_control_plane.machine import problems_here

CONFIG_PREFIX = "cfg-"
# A save that loses the race for a unique name (checked first, then refused by the database).
SAVED_MEANWHILE = "another save with this name happened at the same moment; choose another name or reload"
# How presets are named on buttons; a preset added to the schema without a label here
# still shows, under its key.
PRESET_LABELS = {"cpu-demo": "CPU demo", "cpu-demo-lora": "CPU demo, LoRA", "gsm8k-one-gpu": "GSM8K on one GPU"}


@dataclass
class FormField:
    """One knob as a form shows it. `value` is what the input holds (text as typed, so a
    refused value is shown back as it was entered)."""

    name: str
    input_name: str
    kind: str  # "text", "integer", "float", "bool" or "choice"
    value: object
    default: str
    help: str
    optional: bool = False
    choices: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    changed: bool = False  # differs from the schema's default

    @property
    def input_id(self) -> str:
        return f"id_{self.input_name}"

    @property
    def inputmode(self) -> str:
        return "numeric" if self.kind == "integer" else "decimal"


@dataclass
class FieldGroup:
    key: str
    title: str
    fields: list[FormField]

    @property
    def has_errors(self) -> bool:
        return any(f.errors for f in self.fields)


def _unwrap_optional(annotation) -> tuple[object, bool]:
    """(inner type, whether None is allowed) for `X | None` and `Optional[X]`."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        inner = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
        if len(inner) == 1:
            return inner[0], True
    return annotation, False


def _kind_of(annotation) -> tuple[str, list[str]]:
    if typing.get_origin(annotation) is typing.Literal:
        return "choice", [str(choice) for choice in typing.get_args(annotation)]
    if annotation is bool:
        return "bool", []
    if annotation is int:
        return "integer", []
    if annotation is float:
        return "float", []
    return "text", []


def show_value(value) -> str:
    """A value as a person reads it in a form or on a detail page."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value)


def describe_default(value) -> str:
    return "empty" if value is None else show_value(value)


def schema_field(schema: type[BaseModel], name: str, value, errors: list[str], prefix: str) -> FormField:
    info = schema.model_fields[name]
    annotation, optional = _unwrap_optional(info.annotation)
    kind, choices = _kind_of(annotation)
    return FormField(
        name=name, input_name=prefix + name, kind=kind, choices=choices, optional=optional,
        value=value if kind == "bool" else show_value(value),
        default=describe_default(info.default), help=info.description or "", errors=list(errors),
        changed=show_value(value) != show_value(info.default),
    )


def schema_fields(schema: type[BaseModel], values: dict, errors: dict | None, prefix: str) -> list[FormField]:
    """Every field of `schema` in declaration order; a value missing from `values` shows the default."""
    errors = errors or {}
    return [schema_field(schema, name, values.get(name, info.default), errors.get(name, []), prefix)
            for name, info in schema.model_fields.items()]


def config_field_groups(values: dict | None = None, errors: dict | None = None,
                        prefix: str = CONFIG_PREFIX) -> list[FieldGroup]:
    """The training config's knobs in the schema's groups, for `_fields.html`."""
    by_name = {f.name: f for f in schema_fields(TrainingConfig, values or {}, errors, prefix)}
    return [FieldGroup(key=group, title=GROUPS[group], fields=[by_name[name] for name in names])
            for group, names in field_groups().items() if names]


def unplaced_errors(errors: dict | None, schema: type[BaseModel] = TrainingConfig) -> list[str]:
    """Messages that belong to no field of the schema (an unknown setting, a whole-object rule)."""
    return [f"{name}: {message}" if name != "non_field_errors" else message
            for name, messages in (errors or {}).items() if name not in schema.model_fields
            for message in messages]


def values_from_form(schema: type[BaseModel], data, prefix: str) -> dict:
    """Raw values for every field of `schema` from POSTed form data.

    Text is passed on as typed for the schema to parse (so its messages name the problem);
    an empty optional field is None; an unchecked checkbox sends nothing, which is False when
    the form marked it as shown (`<name>-shown`). A field not on the form keeps its default.
    """
    raw: dict[str, str | bool | None] = {}
    for name, info in schema.model_fields.items():
        annotation, optional = _unwrap_optional(info.annotation)
        key = prefix + name
        if annotation is bool:
            if key in data or f"{key}-shown" in data:
                raw[name] = key in data  # the form marks each checkbox it showed
        elif key not in data:
            continue  # not on the form: the schema's default applies
        elif optional and not data[key].strip():
            raw[name] = None
        else:
            raw[name] = data[key].strip()
    return raw


def config_values_from_form(data, prefix: str = CONFIG_PREFIX) -> dict:
    return values_from_form(TrainingConfig, data, prefix)


def preset_values(preset: str) -> dict:
    """The complete knob values a preset stands for: defaults with the preset on top."""
    return complete_config(PRESETS[preset])


def preset_choices() -> list[tuple[str, str]]:
    return [(key, PRESET_LABELS.get(key, key)) for key in PRESETS]


def as_input_values(values: dict) -> dict:
    """Values as the form's inputs hold them (checkbox state, or the text the server renders),
    so a preset filled in by the script reads exactly as the same preset loaded by link."""
    return {name: value if isinstance(value, bool) else show_value(value) for name, value in values.items()}


def presets_for_script() -> dict:
    """What the page script needs to fill the form from a preset: complete values by preset key."""
    return {key: as_input_values(preset_values(key)) for key in PRESETS}


def default_values() -> dict:
    return TrainingConfig().model_dump(mode="json")


def validated_config(raw: dict, base: dict | None = None) -> tuple[dict | None, dict[str, list[str]]]:
    """(complete values, {}) or (None, errors by field): `raw` over `base` over the defaults,
    checked by the schema (cross-field rules included), then against the model where it is on this
    machine, as the API's serializer checks it."""
    try:
        values = complete_config(base, raw)
    except ValidationError as exc:
        return None, errors_by_field(exc)
    if problems := problems_here(TrainingConfig.model_validate(values)):  # the model as this machine holds it
        return None, {field: [message] for field, message in problems}
    return values, {}
