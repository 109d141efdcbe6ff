"""User-given regular expressions against a live server: the format reward's pattern runs on
completions someone typed (dry runs) or a model wrote (runs). A pattern that backtracks without end
is stopped by the regex module's timeout with a message saying so, and the server answers others;
a pattern that is not one, or too long to be one anybody means, is refused when it is saved."""
import httpx
import pytest

from tests.support import hostile_owner

BACKTRACKS = "(a|aa)+$"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    running = hostile_owner.start(tmp_path_factory.mktemp("server"))
    yield running
    running.stop()


def test_a_pattern_that_backtracks_without_end_is_stopped_with_a_message(server):
    with hostile_owner.api(server) as api:
        created = api.post("/api/reward-functions/", json={"name": "evil", "kind": "builtin", "builtin": "format",
                                                           "params": {"regex": BACKTRACKS}})
        assert created.status_code == 201, created.text
        before = hostile_owner.stored(server)
        response = api.post(f"/api/reward-functions/{created.json()['id']}/dry-run/",
                            json={"dataset": server.seed["dataset"], "completions": ["a" * 5000 + "!"]})
    assert response.status_code == 200, response.text
    row, = response.json()["rows"]
    assert row["scores"] is None and row["error"]["kind"] == "exception"
    assert "the format regex took longer than 1 s on a completion of 5001 characters" in row["error"]["message"]
    assert httpx.get(server.url + "/login/", timeout=10).status_code == 200
    assert hostile_owner.stored(server) == before


def test_a_pattern_that_does_not_compile_or_is_too_long_is_refused_when_saved(server):
    before = hostile_owner.stored(server)
    with hostile_owner.api(server) as api:
        broken = api.post("/api/reward-functions/", json={"name": "broken", "kind": "builtin", "builtin": "format",
                                                          "params": {"regex": "(unclosed"}})
        too_long = api.post("/api/reward-functions/", json={"name": "long", "kind": "builtin", "builtin": "format",
                                                            "params": {"regex": "a?" * 600}})
    assert broken.status_code == 400 and too_long.status_code == 400
    assert broken.json()["params"][0].startswith("regex: Value error, not a regular expression: missing )")
    assert too_long.json()["params"] == ["regex: String should have at most 1000 characters"]
    assert hostile_owner.stored(server) == before
