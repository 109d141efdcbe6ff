"""A 37-character expression whose value has about 10^8 digits, typed into the calculator's dry run
against a live server: refused before it is computed, answered to the player as a tool error (the
episode goes on to its answer), and the server answers a login page right after. Before, this one
request froze the whole web server for seconds (one more level: hours)."""
import httpx
import pytest

from tests.support import hostile_owner

HOSTILE = "(((9**64)**64)**64)**64"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    running = hostile_owner.start(tmp_path_factory.mktemp("server"))
    yield running
    running.stop()


def test_an_expression_too_large_to_compute_comes_back_to_the_player_as_a_tool_error(server):
    before = hostile_owner.stored(server)
    with hostile_owner.api(server) as api:
        response = api.post(f"/api/environments/{server.seed['calculator']}/dry-run/",
                            json={"turns": [f"<calculate>{HOSTILE}</calculate>", "#### 1"]})
    assert response.status_code == 200, response.text
    body = response.json()
    tool = [turn for turn in body["turns"] if turn["role"] == "tool"][-1]
    assert tool["content"] == "error: the result would have more than 4096 bits (about 1233 digits)"
    assert body["end_reason"] == "done" and body["error"] is None and body["tool_errors"] == 1
    assert httpx.get(server.url + "/login/", timeout=10).status_code == 200
    assert hostile_owner.stored(server) == before
