"""A built-in reward's dry run that computes past its limit, against a live server whose limit is
DRY_RUN_TIMEOUT_S=1: the format regex (a|aa)+$ takes a fraction of a second on each of 16 typed
completions (under the regex's own 1 s timeout, so only the dry-run limit can stop the row). The
call runs in a process of its own, killed at the limit, each row answering a timeout that names the
setting; meanwhile the server answers a login page, before the hostile request is done."""
import time

import httpx
import pytest

from tests.support import hostile_owner

# About 0.3 s per completion here: well above 1/16 s and below the regex's 1 s on a slower machine.
SLOW = "a" * 29 + "!"
ROWS = 3


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    running = hostile_owner.start(tmp_path_factory.mktemp("server"), env={"DRY_RUN_TIMEOUT_S": "1"})
    yield running
    running.stop()


def test_a_built_in_dry_run_past_its_time_limit_is_stopped_while_the_server_answers_others(server):
    with hostile_owner.api(server) as api:
        created = api.post("/api/reward-functions/", json={"name": "slow format", "kind": "builtin",
                                                           "builtin": "format", "params": {"regex": "(a|aa)+$"}})
        assert created.status_code == 201, created.text
        before = hostile_owner.stored(server)
        hostile = hostile_owner.InFlight(lambda: api.post(
            f"/api/reward-functions/{created.json()['id']}/dry-run/",
            json={"dataset": server.seed["dataset"], "completions": [[SLOW] * 16] * ROWS}))
        time.sleep(0.3)
        login = httpx.get(server.url + "/login/", timeout=30)
        answered_first = not hostile.finished
        response = hostile.wait()
    assert login.status_code == 200 and answered_first
    assert response.status_code == 200, response.text
    errors = [row["error"] for row in response.json()["rows"]]
    assert [error["kind"] for error in errors] == ["timeout"] * ROWS
    assert all("took longer than 1 s" in e["message"] and "DRY_RUN_TIMEOUT_S" in e["message"] for e in errors)
    assert hostile_owner.stored(server) == before
