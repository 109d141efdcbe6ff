"""A dataset's file comes as multipart only: the schema's JSON bodies have no file field, so it
does not offer what the server refuses there."""
import pytest


@pytest.fixture
def schema(owner_api):
    return owner_api.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()


def body_component(schema, method: str, path: str, media_type: str) -> dict:
    ref = schema["paths"][path][method]["requestBody"]["content"][media_type]["schema"]["$ref"]
    return schema["components"]["schemas"][ref.rsplit("/", 1)[-1]]


def test_a_new_datasets_multipart_body_takes_a_file_and_its_json_body_does_not(schema):
    assert "file" in body_component(schema, "post", "/api/datasets/", "multipart/form-data")["properties"]
    json_body = body_component(schema, "post", "/api/datasets/", "application/json")
    assert "file" not in json_body["properties"] and "name" in json_body["properties"]
    assert json_body["required"] == ["name", "source"] and json_body["additionalProperties"] is False


@pytest.mark.parametrize("method", ["put", "patch"])
def test_a_changed_dataset_which_is_json_takes_no_file(schema, method):
    assert "file" not in body_component(schema, method, "/api/datasets/{id}/", "application/json")["properties"]


def test_a_file_field_in_json_is_a_400_naming_it(owner_api):
    response = owner_api.post("/api/datasets/", {"name": "d", "source": "hub", "hub_id": "openai/gsm8k",
                                                 "file": "rows.jsonl"}, format="json")
    assert response.status_code == 400 and list(response.json()) == ["file"], response.content
