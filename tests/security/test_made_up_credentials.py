"""Made-up credentials read no body: a 100 MB upload with an invented token or session cookie,
against a live server.

The guard once let in any write that brought an Authorization header or a session cookie, and a
150 MB upload with `Authorization: Token xxxxxxxx` was read and spooled whole before DRF's 401.
Here the body is streamed (a generator of pieces: the test stays light) with its length declared,
and the bytes the server took are counted: those its socket accepted before it answered and hung
up. Refused first, that is at most what the kernel's buffers hold; read first, all 100 MB.
"""
import json

import httpx
import pytest

from tests.support.asgi_server import logged_in_client
from tests.support.streamed_uploads import KERNEL_BUFFERS, spooled, upload, upload_server


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with upload_server(tmp_path_factory.mktemp("server")) as running:
        yield running


def datasets_named_big(server) -> int:
    answer = httpx.get(server.url + "/api/datasets/", headers={"Authorization": f"Token {server.api_token}"})
    return sum(dataset["name"] == "big" for dataset in answer.json()["results"])


def test_a_made_up_token_is_refused_before_the_body(server):
    answer = upload(server.port, "/api/datasets/", {"Authorization": "Token xxxxxxxxmadeupxxxxxxxx"})
    assert answer.status == 401 and json.loads(answer.body) == {"detail": "Invalid token."}
    assert answer.headers["connection"] == "close"
    assert answer.sent < KERNEL_BUFFERS, f"the server took {answer.sent / 1024 ** 2:.0f} MB before its 401"
    assert not spooled(server) and datasets_named_big(server) == 0


def test_a_made_up_session_cookie_is_refused_before_the_body(server):
    answer = upload(server.port, "/api/datasets/", {"Cookie": "sessionid=madeupsessionkey0123456789abcdef"})
    assert answer.status == 401
    assert json.loads(answer.body) == {"detail": "Authentication credentials were not provided."}
    assert answer.sent < KERNEL_BUFFERS, f"the server took {answer.sent / 1024 ** 2:.0f} MB before its 401"
    assert not spooled(server) and datasets_named_big(server) == 0


def test_a_made_up_session_cookie_on_the_upload_page_goes_to_the_login_page_unread(server):
    answer = upload(server.port, "/datasets/new/", {"Cookie": "sessionid=madeupsessionkey0123456789abcdef"})
    assert answer.status == 302 and answer.headers["location"] == "/login/?next=/datasets/new/"
    assert answer.sent < KERNEL_BUFFERS, f"the server took {answer.sent / 1024 ** 2:.0f} MB before it answered"
    assert not spooled(server) and datasets_named_big(server) == 0


def test_a_valid_token_still_uploads(server):
    answer = upload(server.port, "/api/datasets/", {"Authorization": f"Token {server.api_token}"}, total=1024 ** 2)
    assert answer.status == 201, answer.body
    assert answer.sent == 1024 ** 2 and datasets_named_big(server) == 1


def test_a_valid_session_still_writes(server):
    client = logged_in_client(server, "owner", "owner-pass-123")
    answer = client.post("/api/configs/", json={"name": "by-session", "values": {}},
                         headers={"X-CSRFToken": client.cookies["csrftoken"]})
    assert answer.status_code == 201, answer.text
