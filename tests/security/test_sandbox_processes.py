"""Attack: reward code that multiplies processes or leaves them behind, through dry runs against a
live server. A fork bomb meets the sandbox's process limit (its row's error names the limit) and
the machine keeps answering; a grandchild started in a session of its own (fork, setsid, fork,
exec `sleep`) while the call spins is gone, checked by its pid, once the call's time limit ends.
Nothing stored changes."""
import random

import httpx
import pytest

from tests.support import code_author, hostile_owner
from tests.support.sandbox import gone, leaves_a_sleeper, reward_source, started

FORK_BOMB = reward_source("while True:\n    os.fork()", imports="import os")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    running = code_author.start(tmp_path_factory.mktemp("server"))
    yield running
    running.stop()


def test_a_fork_bomb_meets_the_process_limit_and_the_server_keeps_answering(server):
    with hostile_owner.api(server) as api:
        reward = code_author.code_reward(api, "fork bomb", FORK_BOMB)
        before = hostile_owner.stored(server)
        response = code_author.dry_run(api, server, reward, ["x"])
    assert response.status_code == 200, response.text
    error = response.json()["rows"][0]["error"]
    assert error["kind"] == "processes", error
    assert "the sandbox allows 64 processes and threads at once" in error["message"]
    assert httpx.get(server.url + "/login/", timeout=10).status_code == 200
    assert hostile_owner.stored(server) == before


def test_a_setsid_grandchild_is_gone_once_the_calls_time_limit_ends(server):
    seconds = f"{random.randint(100000, 999999)}.25"  # names this test's sleep among the machine's processes
    with hostile_owner.api(server) as api:
        reward = code_author.code_reward(api, "leaves a sleeper", leaves_a_sleeper(seconds, then="while True: pass"))
        before = hostile_owner.stored(server)
        dry_run = hostile_owner.InFlight(lambda: code_author.dry_run(api, server, reward, ["x"]))
        sleepers = started("sleep", seconds, within_s=30)
        response = dry_run.wait()
    assert len(sleepers) == 1  # it ran, in a session of its own, while the call spun
    assert response.status_code == 200, response.text
    error = response.json()["rows"][0]["error"]
    assert error["kind"] == "timeout" and "took longer than 5 s" in error["message"]
    assert gone(sleepers)
    assert hostile_owner.stored(server) == before
