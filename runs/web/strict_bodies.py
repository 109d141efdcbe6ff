"""Request bodies take only the fields they name, each in its JSON type.

Left to itself DRF drops a field it does not know and reads `true` as the text "True", `"5"` as
the number 5 and `1` as true: a misspelt field is lost without a word and a wrong type is stored
as something the client did not mean. A serializer built on StrictBody refuses both with a 400
that names the field. Its `refuses_unknown_fields` marker is what the OpenAPI schema reads to
say `additionalProperties: false` (runs/web/schema.py), so the schema and the refusal cannot drift.

Types are held to JSON's only in a JSON request: a page's form and a multipart upload send text,
which DRF's fields read as they always have. Read-only fields are known: they are ignored when
sent, so an object read can be sent back as it is.
"""
from collections.abc import Mapping
from typing import TYPE_CHECKING

from django.http import QueryDict
from pydantic import BaseModel
from pydantic import ValidationError as SchemaError
from rest_framework import relations, serializers
from rest_framework.settings import api_settings

# Most specific first: the first class a field is an instance of gives its JSON types.
JSON_TYPES = (
    (serializers.BooleanField, (bool,), "a boolean"),
    (serializers.CharField, (str,), "text (a JSON string)"),
    (serializers.IntegerField, (int,), "an integer"),
    (serializers.FloatField, (int, float), "a number"),
    (relations.PrimaryKeyRelatedField, (int,), "an id (an integer)"),
)


if TYPE_CHECKING:
    _Serializer = serializers.Serializer  # what the mixin goes before
else:
    _Serializer = object


# A serializer mixin: unknown fields and (in JSON) values of another type are refused, by name.
# (A comment, not a docstring: the schema would show it as the description of every body.)
class StrictBody(_Serializer):
    refuses_unknown_fields = True

    def to_internal_value(self, data):
        problems = self.body_problems(data) if isinstance(data, Mapping) else {}
        try:
            values = super().to_internal_value(data)
        except serializers.ValidationError as exc:
            if problems and isinstance(exc.detail, dict):  # every refused field at once
                raise serializers.ValidationError({**exc.detail, **problems}) from None
            raise
        if problems:
            raise serializers.ValidationError(problems)
        return values

    def body_problems(self, data: Mapping) -> dict[str, list[str]]:
        problems = unknown_field_problems(self.fields, data)
        if sent_as_json(self.context.get("request")):
            problems.update(json_type_problems(self.fields, data))
        return problems


# Unknown fields named one by one, up to this many: a body of a million made-up keys gets an
# answer of a few lines, not one that outgrows what was sent.
UNKNOWN_NAMED = 10


def unknown_field_problems(fields: Mapping, data: Mapping) -> dict[str, list[str]]:
    unknown = [name for name in data if name not in fields and not is_csrf_token(name, data)]
    if not unknown:
        return {}
    taken = ", ".join(name for name, field in fields.items() if not field.read_only)
    problems = {str(name)[:100]: [f"unknown field; this body takes: {taken}"] for name in unknown[:UNKNOWN_NAMED]}
    if len(unknown) > UNKNOWN_NAMED:
        problems[api_settings.NON_FIELD_ERRORS_KEY] = [f"{len(unknown) - UNKNOWN_NAMED} more unknown fields"]
    return problems


def is_csrf_token(name: str, data: Mapping) -> bool:
    """A session's form (the browsable API's upload) carries Django's CSRF token beside the body's
    fields: part of how it is sent, not of what it says."""
    return name == "csrfmiddlewaretoken" and isinstance(data, QueryDict)


def json_type_problems(fields: Mapping, data: Mapping) -> dict[str, list[str]]:
    problems = {}
    for name, field in fields.items():
        if name in data and not field.read_only and (wanted := json_type_problem(field, data[name])):
            problems[name] = [wanted]
    return problems


def json_type_problem(field, value) -> str | None:
    """What `field` takes, when `value` is not of that JSON type; null is left to the field."""
    if isinstance(field, serializers.ListField) and isinstance(value, list):
        wanted = json_type_of(field.child)
        if wanted is None or all(of_type(item, wanted[0]) for item in value if item is not None):
            return None
        return f"each item must be {wanted[1]}"
    wanted = json_type_of(field)
    if value is None or wanted is None or of_type(value, wanted[0]):
        return None
    return f"must be {wanted[1]}, not {json_name(value)}"


def json_type_of(field) -> tuple[tuple[type, ...], str] | None:
    """The JSON types `field` takes and their name in words; None where the field decides alone."""
    if isinstance(field, relations.PrimaryKeyRelatedField) and field.pk_field is not None:
        return None  # an id of another type: its own representation decides
    return next(((types, words) for field_class, types, words in JSON_TYPES if isinstance(field, field_class)), None)


def of_type(value, types: tuple[type, ...]) -> bool:
    # bool is an int in Python, never in JSON.
    return isinstance(value, types) and (bool in types or not isinstance(value, bool))


def json_name(value) -> str:
    names = {bool: "a boolean", int: "a number", float: "a number", str: "text", list: "an array", dict: "an object"}
    return names.get(type(value), type(value).__name__)


def sent_as_json(request) -> bool:
    return getattr(request, "content_type", "").startswith("application/json")


def pydantic_body(model: type[BaseModel], fields: dict) -> serializers.Serializer:
    """The schema of a body that `model` reads (the run-token routes): `fields` as written, closed
    (additionalProperties: false) exactly when the model forbids extra fields."""
    closed = model.model_config.get("extra") == "forbid"
    return type(model.__name__, (serializers.Serializer,), {**fields, "refuses_unknown_fields": closed})()


def schema_problems(exc: SchemaError) -> list[str]:
    """A pydantic refusal as lines naming each field (the first 20), for a 400's `errors`."""
    return [f"{'.'.join(map(str, e['loc'])) or 'batch'}: {e['msg']}" for e in exc.errors()[:20]]
