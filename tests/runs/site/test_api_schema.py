"""The OpenAPI schema and its browsable docs, served without reaching the internet."""
import re

import jsonschema
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone

from runs.checkpoints.models.checkpoint import Checkpoint
from tests.support.api_schema import assert_as_documented, documented_body


def test_the_schema_lists_crud_and_run_actions(schema):
    paths = schema["paths"]
    for path in ("/api/datasets/", "/api/reward-functions/{id}/", "/api/configs/", "/api/runs/{id}/"):
        assert path in paths
    for verb in ("start", "cancel", "resume", "clone"):
        assert "post" in paths[f"/api/runs/{{id}}/{verb}/"]
    for view in ("metrics", "samples", "logs", "checkpoints", "alarms"):
        assert "get" in paths[f"/api/runs/{{id}}/{view}/"]
    assert "post" in paths["/api/runs/{run_id}/events/"]


def test_the_schema_types_a_runs_allowed_actions_as_a_list_of_known_verbs(schema):
    field = schema["components"]["schemas"]["Run"]["properties"]["allowed_actions"]
    assert field["type"] == "array" and field["readOnly"] is True
    enum = schema["components"]["schemas"][field["items"]["$ref"].rsplit("/", 1)[-1]]
    assert enum["type"] == "string"
    assert enum["enum"] == ["start", "edit", "cancel", "resume", "clone", "delete"]


def test_the_schema_documents_query_parameters(schema):
    def names(path):
        return {p["name"] for p in schema["paths"][path]["get"].get("parameters", [])}

    assert {"names", "step_min", "step_max", "max_points"} <= names("/api/runs/{id}/metrics/")
    assert {"step", "step_min", "step_max", "end_reason", "page", "page_size"} <= names("/api/runs/{id}/samples/")
    assert {"after", "page"} <= names("/api/runs/{id}/logs/")


def test_the_schema_lists_the_end_reasons_samples_are_filtered_by(schema):
    samples = schema["paths"]["/api/runs/{id}/samples/"]["get"]
    end_reason = next(p for p in samples["parameters"] if p["name"] == "end_reason")
    assert "max_turns" in end_reason["schema"]["enum"] and "turns" in samples["description"]


def test_the_schema_says_a_hub_push_is_accepted_for_later_and_never_returns_the_token(schema):
    push = schema["paths"]["/api/runs/{run_id}/checkpoints/{checkpoint_id}/push/"]["post"]
    assert set(push["responses"]) == {"202", "400", "401", "403", "404", "409", "413", "415", "429", "503"}
    for path in ("/api/environments/{id}/dry-run/", "/api/reward-functions/{id}/dry-run/", "/api/datasets/"):
        assert "429" in schema["paths"][path]["post"]["responses"], path
    assert "UPLOAD_QUOTA_PER_ACCOUNT_MB" in schema["paths"]["/api/datasets/"]["post"]["responses"]["507"]["description"]
    assert "in the background" in push["description"]
    components = schema["components"]["schemas"]
    assert components["PushToHubRequest"]["properties"]["token"]["writeOnly"] is True
    assert "token" not in components["HubPush"]["properties"]
    assert "get" in schema["paths"]["/api/runs/{run_id}/pushes/"]


def test_a_runs_checkpoints_come_back_in_the_shape_the_schema_gives(schema, owner_api, run):
    for step in (10, 20):
        Checkpoint.objects.create(run=run, step=step, path=f"/ckpt/{step}", size_bytes=1, created_at=timezone.now())
    response = owner_api.get(f"/api/runs/{run.pk}/checkpoints/")
    assert response.status_code == 200
    body = response.json()
    documented = documented_body(schema, "/api/runs/{id}/checkpoints/", "get", response)
    jsonschema.validate(body, documented)
    if documented.get("type") == "array":  # a bare list, documented as one
        item = schema["components"]["schemas"][documented["items"]["$ref"].rsplit("/", 1)[-1]]
        assert [c["step"] for c in body] == [10, 20]
    else:  # paginated
        item = schema["components"]["schemas"][documented["$ref"].rsplit("/", 1)[-1]]["properties"]["results"]
        item = schema["components"]["schemas"][item["items"]["$ref"].rsplit("/", 1)[-1]]
        body = body["results"]
    assert all(set(checkpoint) == set(item["properties"]) for checkpoint in body)


def test_errors_are_documented_with_their_json_body_where_they_are_answered(schema, owner_api, started_run, settings,
                                                                           tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.DATASET_UPLOAD_MAX_BYTES = 1_000
    too_large = owner_api.post("/api/datasets/", {"name": "big", "source": "upload", "file": SimpleUploadedFile(
        "big.jsonl", b'{"prompt": "%s"}\n' % (b"x" * 2_000))}, format="multipart")
    assert too_large.status_code == 413 and "limit" in too_large.json()["detail"]
    assert_as_documented(schema, "/api/datasets/", "post", too_large)

    still_active = owner_api.delete(f"/api/runs/{started_run.pk}/")
    assert still_active.status_code == 409 and "cancel it" in still_active.json()["detail"]
    assert_as_documented(schema, "/api/runs/{id}/", "delete", still_active)

    for path in ("/api/runs/{id}/", "/api/runs/{id}/checkpoints/", "/api/reward-functions/{id}/"):
        unknown = owner_api.get(path.format(id=999_999))
        assert unknown.status_code == 404 and unknown.json()["detail"]
        assert_as_documented(schema, path, "get", unknown)

    bad_page = owner_api.get("/api/runs/", {"page": "two"})
    assert bad_page.status_code == 400 and "page" in bad_page.json()
    assert_as_documented(schema, "/api/runs/", "get", bad_page)


def test_the_schema_is_also_served_as_yaml(owner_api):
    response = owner_api.get("/api/schema/")
    assert response.status_code == 200
    assert b"openapi:" in response.content and b"/api/runs/{id}/start/:" in response.content


def test_the_schema_generates_without_warnings():
    from drf_spectacular.drainage import GENERATOR_STATS
    from drf_spectacular.generators import SchemaGenerator

    GENERATOR_STATS.reset()
    SchemaGenerator().get_schema(request=None, public=True)
    assert not GENERATOR_STATS._warn_cache and not GENERATOR_STATS._error_cache


def test_the_docs_page_uses_local_assets(owner_api):
    response = owner_api.get("/api/docs/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "drf_spectacular_sidecar" in html
    external = re.findall(r"""(?:src|href)=["'](https?://[^"']+)""", html)
    assert not external, external
    assert "cdn." not in html and "unpkg" not in html


def test_the_docs_assets_are_served(client):
    from django.contrib.staticfiles import finders

    assert finders.find("drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js")
