"""An account at its upload quota sends a large dataset: refused with a 507 from the declared
length alone, before the server reads the body (UPLOAD_QUOTA_PER_ACCOUNT_MB), against a live
server. Without the guard's check the quota held too, but only after the whole body was spooled."""
import json

import httpx
import pytest

from tests.support.streamed_uploads import KERNEL_BUFFERS, spooled, upload, upload_server

QUOTA_MB = 8


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    quota = {"UPLOAD_QUOTA_PER_ACCOUNT_MB": str(QUOTA_MB)}
    with upload_server(tmp_path_factory.mktemp("server"), env=quota) as running:
        yield running


def datasets(server) -> list[str]:
    answer = httpx.get(server.url + "/api/datasets/", headers={"Authorization": f"Token {server.api_token}"})
    return [dataset["name"] for dataset in answer.json()["results"]]


def test_an_upload_past_the_quota_is_refused_before_its_body(server):
    before = datasets(server)
    answer = upload(server.port, "/api/datasets/", {"Authorization": f"Token {server.api_token}"},
                    total=64 * 1024 ** 2)
    assert answer.status == 507, answer.body[:300]
    assert "UPLOAD_QUOTA_PER_ACCOUNT_MB" in json.loads(answer.body)["detail"]
    assert answer.sent < KERNEL_BUFFERS, f"the server took {answer.sent / 1024 ** 2:.0f} MB before its 507"
    assert not spooled(server) and datasets(server) == before


def test_an_upload_within_the_quota_is_stored(server):
    answer = upload(server.port, "/api/datasets/", {"Authorization": f"Token {server.api_token}"}, total=1024 ** 2)
    assert answer.status == 201, answer.body[:300]
    assert "big" in datasets(server)
