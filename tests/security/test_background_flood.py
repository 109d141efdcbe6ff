"""One account floods the control plane's queue: twenty model-played dry runs, judge dry runs, Hub
pushes and large uploads at once, through the API and the dataset page. Past its account's limit
for each kind it gets a 429 naming the limit, the count and the setting, nothing of it is stored,
and another account's work is still accepted. Two requests racing for the last place on a live
server's database: exactly one wins. An upload past the account's storage quota: 507 naming it,
nothing stored."""
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from runs.datasets.models import Dataset
from runs.environments.models.environment import Environment
from runs.environments.models.dry_run import EnvironmentDryRun
from runs.hub.models import HubPush
from runs.rewards.models.dry_run import RewardDryRun
from runs.rewards.models.function import RewardFunction
from tests.support import two_users
from tests.support.hub_pushes import HUB_USER, TOKEN, checkpoint_on_disk

FLOOD = 20
ROWS = b'{"prompt": "1+1", "answer": "2"}\n' * 20


@pytest.fixture
def data_dir(settings, tmp_path):
    settings.DATA_DIR, settings.RUNS_DIR, settings.MEDIA_ROOT = tmp_path, tmp_path / "runs", tmp_path / "uploads"
    settings.MODELS_DIR = tmp_path / "models"
    (tmp_path / "models" / "tiny").mkdir(parents=True)
    (tmp_path / "models" / "tiny" / "config.json").write_text("{}")  # a prepared model, as far as asking goes
    return tmp_path


def refused_as_too_much(response, setting: str, limit: int) -> bool:
    body = response.json()
    return (response.status_code == 429 and body["setting"] == setting and body["limit"] == limit
            and body["unfinished"] == limit and setting in body["detail"] and "Nothing was stored" in body["detail"])


def flood(send) -> list:
    return [send(number) for number in range(FLOOD)]


def calculator_of(user, dataset) -> Environment:
    return Environment.objects.create(owner=user, dataset=dataset, name="calc", kind="builtin", builtin="calculator",
                                      params={"cost_per_call": 0.0, "max_result_chars": 200})


def test_a_flood_of_model_played_environment_dry_runs_stops_at_the_accounts_limit(
        owner, owner_api, other_user, other_api, dataset, data_dir):
    environment = calculator_of(owner, dataset)
    url = f"/api/environments/{environment.pk}/dry-run/"
    answers = flood(lambda n: owner_api.post(url, {"model": "tiny", "max_turns": 2, "row": n % 5}, format="json"))
    assert [a.status_code for a in answers[:2]] == [202, 202], answers[0].content
    setting = "BACKGROUND_UNFINISHED_PER_ACCOUNT_ENVIRONMENT_DRY_RUNS"
    assert all(refused_as_too_much(a, setting, 2) for a in answers[2:]), answers[2].content
    assert EnvironmentDryRun.objects.filter(requested_by=owner).count() == 2

    theirs = calculator_of(other_user, Dataset.objects.create(owner=other_user, name="arith", source="generator",
                                                              generator="arithmetic", row_count=10))
    asked = other_api.post(f"/api/environments/{theirs.pk}/dry-run/", {"model": "tiny", "max_turns": 2},
                           format="json")
    assert asked.status_code == 202, asked.content


def test_a_flood_of_judge_dry_runs_stops_at_one_unfinished(owner, owner_api, other_user, other_api, dataset):
    def judge(user):
        return RewardFunction.objects.create(owner=user, name="judge", kind="judge", params={
            "template": "{prompt} {completion}", "endpoint": "url", "base_url": "http://127.0.0.1:9/v1", "model": "m"})

    url = f"/api/reward-functions/{judge(owner).pk}/dry-run/"
    answers = flood(lambda n: owner_api.post(url, {"dataset": dataset.pk, "completions": ["4"]}, format="json"))
    assert answers[0].status_code == 202, answers[0].content
    assert all(refused_as_too_much(a, "BACKGROUND_UNFINISHED_PER_ACCOUNT_REWARD_DRY_RUNS", 1) for a in answers[1:])
    assert RewardDryRun.objects.filter(requested_by=owner).count() == 1
    theirs = Dataset.objects.create(owner=other_user, name="arith", source="generator", generator="arithmetic",
                                    row_count=10)
    assert other_api.post(f"/api/reward-functions/{judge(other_user).pk}/dry-run/",
                          {"dataset": theirs.pk, "completions": ["4"]}, format="json").status_code == 202


def test_a_flood_of_hub_pushes_stops_at_the_accounts_limit(owner, owner_api, staff_api, run, data_dir):
    checkpoint = checkpoint_on_disk(run)
    url = f"/api/runs/{run.pk}/checkpoints/{checkpoint.pk}/push/"
    answers = flood(lambda n: owner_api.post(url, {"repo_id": f"{HUB_USER}/m{n}", "token": TOKEN}, format="json"))
    assert [a.status_code for a in answers[:2]] == [202, 202], answers[0].content
    assert all(refused_as_too_much(a, "BACKGROUND_UNFINISHED_PER_ACCOUNT_HUB_PUSHES", 2) for a in answers[2:])
    assert HubPush.objects.filter(requested_by=owner).count() == 2
    # Another account (staff may push anyone's checkpoint) still has its places.
    assert staff_api.post(url, {"repo_id": f"{HUB_USER}/staff", "token": TOKEN}, format="json").status_code == 202


def upload(api, name: str, content: bytes = ROWS):
    return api.post("/api/datasets/", {"name": name, "source": "upload",
                                       "file": SimpleUploadedFile(f"{name}.jsonl", content)}, format="multipart")


def stored_files(data_dir: Path) -> list[Path]:
    return [path for path in (data_dir / "uploads").rglob("*") if path.is_file()]


def test_a_flood_of_large_uploads_stops_at_the_accounts_checks(owner, owner_api, other_api, settings, data_dir):
    settings.FILE_UPLOAD_MAX_MEMORY_SIZE = 16  # every upload is "large": stored, then checked by the consumer
    answers = flood(lambda n: upload(owner_api, f"d{n}"))
    assert [a.status_code for a in answers[:3]] == [201] * 3, answers[0].content
    assert all(a.json()["state"] == "checking" for a in answers[:3])
    assert all(refused_as_too_much(a, "BACKGROUND_UNFINISHED_PER_ACCOUNT_DATASET_CHECKS", 3) for a in answers[3:])
    assert Dataset.objects.filter(owner=owner).count() == 3 and len(stored_files(data_dir)) == 3
    assert upload(other_api, "theirs").status_code == 201


def test_the_dataset_page_says_the_same_refusal(owner, client, settings, data_dir):
    settings.FILE_UPLOAD_MAX_MEMORY_SIZE = 16
    client.force_login(owner)
    pages = flood(lambda n: client.post("/datasets/new/", {
        "source": "upload", "name": f"p{n}", "prompt_column": "prompt",
        "file": SimpleUploadedFile(f"p{n}.jsonl", ROWS)}))
    assert [page.status_code for page in pages[:3]] == [302] * 3
    assert all(page.status_code == 400 for page in pages[3:])
    assert "BACKGROUND_UNFINISHED_PER_ACCOUNT_DATASET_CHECKS" in pages[-1].content.decode()
    assert Dataset.objects.filter(owner=owner).count() == 3 and len(stored_files(data_dir)) == 3


def test_an_upload_past_the_accounts_quota_is_refused_before_it_is_stored(
        owner, owner_api, other_api, client, settings, data_dir):
    settings.UPLOAD_QUOTA_PER_ACCOUNT_BYTES = len(ROWS) * 3 // 2
    assert upload(owner_api, "first").status_code == 201
    refused = upload(owner_api, "second")
    assert refused.status_code == 507 and refused.json()["setting"] == "UPLOAD_QUOTA_PER_ACCOUNT_MB"
    assert "UPLOAD_QUOTA_PER_ACCOUNT_MB" in refused.json()["detail"] and "used of" in refused.json()["detail"]
    client.force_login(owner)
    page = client.post("/datasets/new/", {"source": "upload", "name": "third", "prompt_column": "prompt",
                                          "file": SimpleUploadedFile("third.jsonl", ROWS)})
    assert page.status_code == 400 and "UPLOAD_QUOTA_PER_ACCOUNT_MB" in page.content.decode()
    assert list(Dataset.objects.filter(owner=owner).values_list("name", flat=True)) == ["first"]
    assert len(stored_files(data_dir)) == 1
    assert upload(other_api, "theirs").status_code == 201  # the quota is each account's own


RACE = """
import json, threading
from pathlib import Path
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client
from runs.models import Dataset, Environment, EnvironmentDryRun

(Path(settings.MODELS_DIR) / "tiny").mkdir(parents=True, exist_ok=True)
(Path(settings.MODELS_DIR) / "tiny" / "config.json").write_text("{}")
user = get_user_model().objects.get(pk=USER)
environment = Environment.objects.create(owner=user, dataset_id=DATASET, name="calc", kind="builtin",
                                         builtin="calculator", params={"cost_per_call": 0.0, "max_result_chars": 200})
EnvironmentDryRun.ask(environment, user, {"model": "tiny", "max_turns": 2})  # one of the two places taken
start = threading.Barrier(RACERS)
codes = []

def race():
    client = Client(HTTP_AUTHORIZATION="Token " + TOKEN, SERVER_NAME="127.0.0.1")
    start.wait()
    answer = client.post(f"/api/environments/{environment.pk}/dry-run/",
                         json.dumps({"model": "tiny", "max_turns": 2}), content_type="application/json")
    codes.append(answer.status_code)
    connection.close()

threads = [threading.Thread(target=race) for _ in range(RACERS)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
print(json.dumps({"codes": sorted(codes), "rows": EnvironmentDryRun.objects.filter(requested_by=user).count()}))
"""


def test_requests_racing_for_the_last_place_on_a_live_database_leave_one_winner(tmp_path):
    """Threads of one process, each with its own connection to the live server's SQLite file (WAL)."""
    server = two_users.start(tmp_path)
    try:
        seed = server.seed["second"]
        raced = server.shell_json(f"USER, DATASET, TOKEN, RACERS = {seed['user']}, {seed['dataset']}, "
                                  f"{seed['token']!r}, 8\n" + RACE)
    finally:
        server.stop()
    assert raced == {"codes": [202] + [429] * 7, "rows": 2}, raced


HELD = """
import json, threading, time
from django.contrib.auth import get_user_model
from django.db import connection
from runs.background.limits import ENVIRONMENT_DRY_RUNS, UnfinishedLimitReached, place_for
from runs.models import Environment, EnvironmentDryRun

user = get_user_model().objects.get(pk=USER)
environment = Environment.objects.create(owner=user, dataset_id=DATASET, name="calc", kind="builtin",
                                         builtin="calculator", params={"cost_per_call": 0.0, "max_result_chars": 200})
EnvironmentDryRun.ask(environment, user, {"model": "tiny", "max_turns": 2})  # one of the two places taken
counted, release, outcomes = threading.Event(), threading.Event(), {}

def claim(name, hold):
    started = time.monotonic()
    try:
        with place_for(ENVIRONMENT_DRY_RUNS, user):
            if hold:  # the first has counted and holds the place, not yet stored: the second asks now
                counted.set()
                release.wait(10)
            EnvironmentDryRun.ask(environment, user, {"model": "tiny", "max_turns": 2})
        outcomes[name] = ["stored", time.monotonic() - started]
    except UnfinishedLimitReached:
        outcomes[name] = ["refused", time.monotonic() - started]
    connection.close()

first = threading.Thread(target=claim, args=("first", True))
first.start()
counted.wait(10)
second = threading.Thread(target=claim, args=("second", False))
second.start()
time.sleep(1.5)
release.set()
first.join()
second.join()
print(json.dumps({**outcomes, "rows": EnvironmentDryRun.objects.filter(requested_by=user).count()}))
"""


def test_a_request_for_the_last_place_waits_for_the_one_that_counted_it_and_is_refused(tmp_path):
    """Made deterministic: the first claim has counted and holds the last place while the second asks;
    the second waits for the first's commit and counts its row (without the lock, both are stored)."""
    server = two_users.start(tmp_path)
    try:
        seed = server.seed["second"]
        held = server.shell_json(f"USER, DATASET = {seed['user']}, {seed['dataset']}\n" + HELD)
    finally:
        server.stop()
    assert held["first"][0] == "stored" and held["second"][0] == "refused" and held["rows"] == 2, held
    assert held["second"][1] >= 1.0, held  # it waited for the first's transaction
