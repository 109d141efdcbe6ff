"""Which limit and which identity each route asks for before its body is read."""
import pytest

from runs.site.body_limits import MULTIPART_MARGIN, Identity, gate_for


@pytest.fixture(autouse=True)
def limits(settings):
    settings.REQUEST_BODY_MAX_BYTES, settings.INGEST_BATCH_MAX_BYTES = 4_000, 32_000
    settings.CHECKPOINT_CHUNK_MAX_BYTES, settings.DATASET_UPLOAD_MAX_BYTES = 64_000, 200_000


@pytest.mark.parametrize("method, path, limit, setting, wrong_token_is_404", [
    ("POST", "/api/runs/7/events/", 32_000, "INGEST_BATCH_MAX_MB", False),
    ("PUT", "/api/runs/7/uploads/20/files/optimizer/__0_0.distcp", 64_000, "CHECKPOINT_CHUNK_MAX_MB", True),
    ("GET", "/api/runs/7/uploads/20/files/model.safetensors", 4_000, "REQUEST_BODY_MAX_MB", True),
    ("POST", "/api/runs/7/uploads/20/complete", 4_000, "REQUEST_BODY_MAX_MB", True),
    ("GET", "/api/runs/7/uploads/20/archive", 4_000, "REQUEST_BODY_MAX_MB", True),
    ("GET", "/api/runs/7/dataset/", 4_000, "REQUEST_BODY_MAX_MB", True),
])
def test_a_run_token_route_needs_the_runs_token_and_has_its_own_limit(method, path, limit, setting,
                                                                      wrong_token_is_404):
    gate = gate_for(method, path)
    assert (gate.identity, gate.run_id, gate.limit, gate.limit_setting) == (Identity.RUN_TOKEN, 7, limit, setting)
    assert gate.wrong_token_is_404 is wrong_token_is_404


@pytest.mark.parametrize("path", ["/api/datasets/", "/datasets/new/", "/admin/runs/dataset/add/",
                                  "/admin/runs/dataset/3/change/"])
def test_a_dataset_upload_takes_the_dataset_limit_and_room_for_its_form(path):
    gate = gate_for("POST", path)
    assert (gate.limit, gate.limit_setting) == (200_000 + MULTIPART_MARGIN, "DATASET_UPLOAD_MAX_MB")


@pytest.mark.parametrize("method, path, identity", [
    ("POST", "/api/runs/", Identity.API_USER),
    ("DELETE", "/api/runs/7/", Identity.API_USER),
    ("PATCH", "/api/datasets/3/", Identity.API_USER),
    ("POST", "/api/runs/7/checkpoints/2/push/", Identity.API_USER),
    ("POST", "/runs/7/cancel/", Identity.PAGE_USER),
    ("POST", "/admin/runs/run/7/change/", Identity.PAGE_USER),
    ("POST", "/login/", Identity.NONE),
    ("POST", "/admin/login/", Identity.NONE),
    ("POST", "/logout/", Identity.NONE),
    ("GET", "/api/runs/", Identity.NONE),
    ("GET", "/runs/7/", Identity.NONE),
])
def test_writes_need_someone_signed_in_except_on_the_login_pages(method, path, identity):
    gate = gate_for(method, path)
    assert (gate.identity, gate.limit, gate.limit_setting) == (identity, 4_000, "REQUEST_BODY_MAX_MB")


@pytest.mark.parametrize("method, path", [
    ("TRACE", "/api/runs/7/events/"), ("GET", "/api/runs/7/events/"), ("OPTIONS", "/api/runs/7/dataset/"),
    ("DELETE", "/api/runs/7/uploads/20/files/model.safetensors"), ("GET", "/api/runs/7/uploads/20/complete"),
    ("POST", "/api/runs/7/uploads/20/archive"), ("PUT", "/api/runs/7/uploads/20/other"),
])
def test_a_method_a_run_token_route_does_not_take_is_left_to_its_view(method, path):
    gate = gate_for(method, path)
    assert (gate.identity, gate.limit) == (Identity.NONE, 4_000)  # its 405 comes after at most the default


def test_a_changed_dataset_is_json_and_takes_the_default_limit():
    assert gate_for("PUT", "/api/datasets/3/").limit == 4_000


def test_a_path_that_only_looks_like_a_run_token_route_is_not_one():
    assert gate_for("POST", "/api/runs/7/events/extra").identity is Identity.API_USER
    assert gate_for("POST", "/api/runs/x/events/").identity is Identity.API_USER
