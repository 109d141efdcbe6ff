"""The attack: read a session off the wire. With an https PUBLIC_URL the session and CSRF cookies
are marked Secure (a browser never sends them over plain http, where anyone on the path reads
them) and pages carry Strict-Transport-Security, so the browser stops trying plain http at all.

A live control plane behind a (pretend) TLS proxy: the requests say X-Forwarded-Proto: https,
which the server trusts because the operator set TRUST_X_FORWARDED_PROTO.
"""
import httpx
import pytest

from tests.support.asgi_server import AsgiServer

HOST = "grpo.example.org"
OVER_TLS = {"Host": HOST, "X-Forwarded-Proto": "https", "Origin": f"https://{HOST}"}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    env = {"PUBLIC_URL": f"https://{HOST}", "TRUST_X_FORWARDED_PROTO": "1", "ALLOWED_HOSTS": f"127.0.0.1,{HOST}"}
    with AsgiServer(tmp_path_factory.mktemp("https"), env=env) as started:
        started.manage("shell", "-c", "from django.contrib.auth import get_user_model; "
                       "get_user_model().objects.create_user('owner', password='owner-pass-123')")
        yield started


def set_cookies(response: httpx.Response) -> dict[str, str]:
    return {header.split("=", 1)[0]: header for header in response.headers.get_list("set-cookie")}


def test_login_over_https_marks_its_cookies_secure_and_sends_hsts(server):
    with httpx.Client(base_url=server.url, timeout=30) as client:
        page = client.get("/login/", headers=OVER_TLS)
        assert page.headers["strict-transport-security"] == "max-age=86400"
        csrf = set_cookies(page)["csrftoken"]
        assert "; Secure" in csrf
        token = csrf.split("=", 1)[1].split(";", 1)[0]
        client.cookies.clear()  # sent by hand below: the jar keeps Secure cookies off http://127.0.0.1
        login = client.post("/login/", headers={**OVER_TLS, "Cookie": f"csrftoken={token}"},
                            data={"username": "owner", "password": "owner-pass-123", "csrfmiddlewaretoken": token})
    assert login.status_code == 302, login.text[:500]
    assert "; Secure" in set_cookies(login)["sessionid"]
    assert login.headers["strict-transport-security"] == "max-age=86400"
