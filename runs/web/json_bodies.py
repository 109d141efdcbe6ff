"""JSON bodies nested no deeper than JSON_MAX_DEPTH, refused with a 400 that says so.

Python's decoder recurses once per nested array or object: a body of 100,000 `[` raised a
RecursionError, which no parser turned into a 400, so the client got a 500. A body that decodes
a little under the interpreter's limit (some 900 levels) reached the views, and later json.dumps
or a serializer could hit the same wall. Here both are one refusal, naming the depth taken.
No field of this API's bodies (configs, parameters, event batches) comes near it.
"""
import json

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

JSON_MAX_DEPTH = 64


class JSONTooDeep(ValueError):
    def __init__(self):
        super().__init__(f"JSON nested deeper than {JSON_MAX_DEPTH} levels (arrays and objects inside "
                         f"each other); this server takes at most {JSON_MAX_DEPTH}")


def refuse_deep(value) -> None:
    """JSONTooDeep when `value` (decoded JSON) nests past JSON_MAX_DEPTH; walked without recursion."""
    stack = [(value, 1)]
    while stack:
        value, depth = stack.pop()
        children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
        for child in children:
            if isinstance(child, (dict, list)):
                if depth >= JSON_MAX_DEPTH:
                    raise JSONTooDeep
                stack.append((child, depth + 1))


def bounded_loads(text: str | bytes):
    """json.loads, with JSONTooDeep (a ValueError) for a document nested too deep."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise JSONTooDeep from None
    refuse_deep(value)
    return value


class BoundedJSONParser(JSONParser):
    """DRF's JSONParser (same media type, same strictness) with the depth refused as a 400."""

    def parse(self, stream, media_type=None, parser_context=None):
        try:
            value = super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError(f"JSON parse error - {JSONTooDeep()}") from None
        try:
            refuse_deep(value)
        except JSONTooDeep as exc:
            raise ParseError(f"JSON parse error - {exc}") from None
        return value
