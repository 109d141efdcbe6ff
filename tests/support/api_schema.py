"""Responses checked against the OpenAPI document's schema for them: the `schema` fixture (the
document the API serves), the body a response's status is documented with, and the check, strict
or with OpenAPI's `nullable` read as JSON Schema's null type (jsonschema alone ignores it, and
refuses every null the schema allows)."""
import jsonschema
import pytest


@pytest.fixture
def schema(owner_api):
    response = owner_api.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200, response.content
    return response.json()


def documented_body(schema, path: str, method: str, response) -> dict:
    """The JSON schema the OpenAPI document gives for this response's status; fails when the
    status is not listed. Its $refs resolve against the whole document."""
    responses = schema["paths"][path][method]["responses"]
    code = str(response.status_code)
    assert code in responses, f"{method.upper()} {path} answered {code}, not listed in {sorted(responses)}"
    assert response["Content-Type"].startswith("application/json")
    return {**responses[code]["content"]["application/json"]["schema"], "components": schema["components"]}


def assert_as_documented(schema, path: str, method: str, response) -> None:
    jsonschema.validate(response.json(), documented_body(schema, path, method, response))


def assert_as_documented_with_nulls(schema: dict, path: str, method: str, response) -> None:
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
