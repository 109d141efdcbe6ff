"""A response checked against the OpenAPI document's schema for it, OpenAPI's `nullable` read as
JSON Schema's null type (jsonschema alone ignores it, and refuses every null the schema allows)."""
import jsonschema

from tests.runs.test_api_schema import documented_body


def assert_as_documented(schema: dict, path: str, method: str, response) -> None:
    jsonschema.validate(response.json(), with_nulls(documented_body(schema, path, method, response)))


def with_nulls(node):
    if isinstance(node, list):
        return [with_nulls(item) for item in node]
    if not isinstance(node, dict):
        return node
    node = {key: with_nulls(value) for key, value in node.items()}
    if node.pop("nullable", False):
        return {"anyOf": [node, {"type": "null"}]}
    return node
