"""Attack: reward code that reads the control plane's database (every account's password hash) on a
machine where nothing confines the sandbox's files (no Landlock: forced here by turning it off).
User code is not run there: a dry run answers each row with the refusal, naming the setting with
which an operator accepts the risk (SANDBOX_ALLOW_UNCONFINED_FILES=1), and a run fails at start
with it. Where Landlock is, the same reward against a live server's own SQLite file gets an error
and not a byte of it. Nothing stored changes."""
import pytest

from runs.rewards.models.function import RewardFunction
from tests.support import code_author, hostile_owner
from tests.support.reward_authors import grant_reward_authoring
from tests.support.sandbox import one_pool_for_every_owner, reward_source
from worker.trainer.rewards.sandbox import pool as pool_module
from worker.trainer.rewards.sandbox.isolation import Isolation

NO_LANDLOCK_FILES = Isolation(landlock_files=False, allow_unconfined_files=False)
REFUSAL = "user code was not run: this machine cannot keep it away from the machine's files"
SETTING = "SANDBOX_ALLOW_UNCONFINED_FILES=1"
HASH = "pbkdf2_sha256$870000$salt$c2VjcmV0LWhhc2g="


def reads(path) -> str:
    """A reward that returns the file's length as its score and prints the file."""
    return reward_source(f"data = open({str(path)!r}, 'rb').read()\nprint(data[:200])\n"
                         "return [float(len(data))] * len(completions)")


@pytest.fixture
def unconfined_pools(monkeypatch):
    with one_pool_for_every_owner(monkeypatch, NO_LANDLOCK_FILES) as pool:
        yield pool


def test_a_dry_run_that_would_read_the_database_is_refused_naming_the_setting(
        owner_api, owner, dataset, unconfined_pools, tmp_path):
    database = tmp_path / "db.sqlite3"  # stands for the control plane's SQLite file
    database.write_bytes(b"SQLite format 3\0" + HASH.encode())
    grant_reward_authoring(owner)
    reward = RewardFunction.objects.create(owner=owner, name="thief", kind="code", source=reads(database))
    before = list(RewardFunction.objects.values())
    response = owner_api.post(f"/api/reward-functions/{reward.pk}/dry-run/",
                              {"dataset": dataset.pk, "completions": ["#### 6", "#### -2"]}, format="json")
    assert response.status_code == 200, response.content
    assert HASH not in response.content.decode()
    for row in response.json()["rows"]:
        assert row["scores"] is None and row["error"]["kind"] == "refused", row
        assert row["error"]["message"].startswith(REFUSAL) and SETTING in row["error"]["message"]
    assert unconfined_pools.processes_started == 0
    assert list(RewardFunction.objects.values()) == before


def test_a_run_with_code_rewards_fails_at_start_naming_the_setting(tmp_path, monkeypatch):
    pytest.importorskip("torch")
    from tests.support.trainers import logged_lines, trainer_for

    monkeypatch.setattr(pool_module, "Isolation", lambda: NO_LANDLOCK_FILES)
    source = reward_source("return [1.0] * len(completions)")
    run = trainer_for(tmp_path, rewards=[{"name": "mine", "kind": "code", "source": source}])
    assert run.run() == "failed"
    reason = next(line for line in logged_lines(tmp_path) if line.startswith("SandboxError"))
    assert REFUSAL in reason and SETTING in reason
    assert run.reward_sandbox.processes_started == 0 and run.reward_sandbox.closed


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    running = code_author.start(tmp_path_factory.mktemp("server"))
    yield running
    running.stop()


def test_with_landlock_the_live_servers_database_file_is_out_of_reach(server):
    with hostile_owner.api(server) as api:
        reward = code_author.code_reward(api, "thief", reads(server.own_database))
        before = hostile_owner.stored(server)
        response = code_author.dry_run(api, server, reward, ["x"])
    assert response.status_code == 200, response.text
    row = response.json()["rows"][0]
    if row["error"]["kind"] == "refused":
        pytest.skip(f"no Landlock on this kernel: {row['error']['message']}")
    assert row["scores"] is None and row["error"]["kind"] == "exception", row
    assert "PermissionError" in row["error"]["message"] and "SQLite format" not in response.text
    assert hostile_owner.stored(server) == before
