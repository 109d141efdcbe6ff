"""The OpenAPI schema lists the errors each operation can really answer, not only its success.

Every error of this API is a JSON object: `detail` says what is wrong, and a refused field is
a key of its own with its messages (runs/web/errors.py). Which statuses an operation can give
follows from what it takes and who may call it, so they are added here once instead of on
every view; an operation that documents one itself keeps its own words.
"""
from django.core.validators import RegexValidator
from drf_spectacular.openapi import AutoSchema
from rest_framework import serializers

ERROR_BODY = {
    "type": "object",
    "properties": {"detail": {"type": "string", "description": "What is wrong, for people."}},
    "additionalProperties": True,
    "description": "`detail`, or one key per refused field with its messages.",
}
WRITES = ("POST", "PUT", "PATCH", "DELETE")
# DRF's text fields refuse the NUL character (PostgreSQL cannot store it) and, unless blank is
# allowed, text that is only whitespace (it is trimmed first); the schema says so.
NO_NUL = r"^[^\x00]*$"
NOT_BLANK = r"^[^\x00]*[^\s\x00][^\x00]*$"
WHY = {
    "400": "The request was refused: the answer names each field or parameter and what is wrong with it.",
    "401": "No credentials, or credentials that are not valid.",
    "403": "Not allowed for this account (or a session request without its CSRF token).",
    "404": "No such object visible to this account (in the path or named in the request), or no such page.",
    "409": "Conflicts with the object's state or with objects that depend on it; `detail` says which.",
    "413": "The body is larger than this route takes (REQUEST_BODY_MAX_MB, or the route's own limit, which "
           "`detail` names); refused before it is read.",
    "415": "A body of a media type this operation does not take.",
}


class DocumentedErrorsSchema(AutoSchema):
    def _map_serializer(self, serializer, direction, bypass_extensions=False):
        schema = super()._map_serializer(serializer, direction, bypass_extensions)
        # A body that refuses unknown fields says so; the marker is the refusal's own
        # (runs/web/strict_bodies.py), so the schema cannot promise more or less than it.
        if direction == "request" and getattr(serializer, "refuses_unknown_fields", False):
            schema = {**schema, "additionalProperties": False}
        return schema

    def _map_serializer_field(self, field, direction, bypass_extensions=False):
        schema = super()._map_serializer_field(field, direction, bypass_extensions)
        # A field with a pattern of its own (a RegexField) gets that one, added after this.
        has_pattern = "pattern" in schema or any(isinstance(v, RegexValidator) for v in field.validators)
        if (direction == "request" and isinstance(field, serializers.CharField) and schema.get("type") == "string"
                and not has_pattern):
            blank_refused = not field.allow_blank and field.trim_whitespace
            schema = {**schema, "pattern": NOT_BLANK if blank_refused else NO_NUL}
        return schema

    def _get_response_bodies(self, direction="response"):
        responses = super()._get_response_bodies(direction)
        for code in self._error_statuses():
            responses.setdefault(code, {"description": WHY[code],
                                        "content": {"application/json": {"schema": ERROR_BODY}}})
        return responses

    def _error_statuses(self) -> list[str]:
        has_body = self.method in ("POST", "PUT", "PATCH")
        codes = ["401"]
        if self.view.permission_classes or self.view.authentication_classes:
            codes.append("403")
        if has_body or self._has_query_parameters():
            codes.append("400")
        codes.append("404")  # an id in the path, the body or the query that is not there, a page past the end
        if self.method in WRITES:
            codes.append("409")
        if has_body and self.view.parser_classes:  # no parsers: the body is read as bytes
            codes.append("415")
        if has_body:  # every route has a body limit (runs/site/body_limits.py)
            codes.append("413")
        return codes

    def _has_query_parameters(self) -> bool:
        return any(parameter.get("in") == "query" for parameter in self._get_parameters())


def json_bodies_take_no_files(result, generator, request, public):
    """A postprocessing hook: a JSON body cannot carry a file (DRF's FileField answers "not a file"
    to anything sent there), so where a body's component has one, the JSON body gets a copy
    without it, `<Name>Json`; the multipart body keeps the original."""
    components = result.get("components", {}).get("schemas", {})
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            json_body = operation.get("requestBody", {}).get("content", {}).get("application/json", {})
            name = json_body.get("schema", {}).get("$ref", "").rsplit("/", 1)[-1]
            if name and (files := file_properties(components[name])):
                components.setdefault(f"{name}Json", without_properties(components[name], files))
                json_body["schema"] = {"$ref": f"#/components/schemas/{name}Json"}
    return result


def file_properties(component: dict) -> set[str]:
    return {name for name, spec in component.get("properties", {}).items() if spec.get("format") == "binary"}


def without_properties(component: dict, names: set[str]) -> dict:
    trimmed = {**component, "properties": {k: v for k, v in component["properties"].items() if k not in names}}
    if required := [name for name in component.get("required", []) if name not in names]:
        trimmed["required"] = required
    else:
        trimmed.pop("required", None)
    return trimmed
