"""Shared fixtures: an owner with a dataset, rewards, a config and a run; another user; staff.

Tests run on the embedded defaults (SQLite, in-memory channel layer, filesystem
broker) unless DATABASE_URL / REDIS_URL / CELERY_BROKER_URL point at real
services, which is how `make test` runs the suite a second time in CI.
"""
from unittest import mock

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from runs.datasets.models import Dataset
from runs.rewards.models.function import RewardFunction
from runs.training_runs.models import Run, RunReward
from runs.configs.models import TrainingConfig
from worker.trainer.config import TrainingConfig as ConfigSchema

from tests.support import exit_watchdog
from tests.support.api_clients import api_client_for
from tests.support.asgi_server import AsgiServer
from tests.support.s3_server import CREDENTIALS, S3Server

# Fixtures of tests/support/ that tests in several folders take.
pytest_plugins = ["tests.support.browser", "tests.support.api_schema", "tests.support.fleet"]

EXIT_STATUS = pytest.StashKey[int]()

# The trainer's own tests, and the attacks on the trainer alone (its orders, its store, its vLLM).
TRAINER_TESTS = ("tests/worker/trainer/", "tests/security/test_vllm_api_key.py",
                 "tests/security/test_trainer_orders.py", "tests/security/test_trainer_store_on_loopback.py",
                 "tests/security/test_model_as_vllm_option.py")


# Tests that touch no database, broker or channel layer: those that read the source tree and build
# from it, and those that place runs on a real Ray cluster (the worker's side alone).
SERVICE_FREE_TESTS = ("tests/docs/", "tests/test_layering.py", "tests/test_import_cycles.py",
                      "tests/test_test_layout.py", "tests/test_folder_order.py", "tests/test_metric_names.py",
                      "tests/test_docstrings.py", "tests/scripts/", "tests/worker/placement/")
# Modules that start a control plane through AsgiServer on the tests' behalf.
SERVER_STARTERS = ("tests.support.two_users", "tests.support.hostile_owner", "tests.support.code_author")
DATABASE_FIXTURES = {"db", "transactional_db", "django_db_reset_sequences", "django_db_serialized_rollback",
                     "live_server"}


def pytest_sessionfinish(session, exitstatus):
    session.config.stash[EXIT_STATUS] = int(exitstatus)


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config):
    exit_watchdog.arm(config.stash.get(EXIT_STATUS, 1))


def pytest_collection_modifyitems(config, items):
    """Marks the tests the services pass of `make test` need not repeat: the trainer's, those
    that touch no service at all, and those whose only control plane is one they start
    (AsgiServer gives it its own SQLite file and embedded layers whatever the pass's settings,
    so both passes would test the same parts)."""
    for item in items:
        if any(part in item.nodeid for part in TRAINER_TESTS):
            item.add_marker(pytest.mark.trainer)
        if any(part in item.nodeid for part in SERVICE_FREE_TESTS):
            item.add_marker(pytest.mark.no_services)
        if starts_its_own_control_plane(item) and not touches_the_test_database(item):
            item.add_marker(pytest.mark.own_server)


def starts_its_own_control_plane(item) -> bool:
    module = getattr(item, "module", None)
    return module is not None and any(
        value is AsgiServer or getattr(value, "__name__", None) in SERVER_STARTERS for value in vars(module).values())


def touches_the_test_database(item) -> bool:
    return item.get_closest_marker("django_db") is not None or bool(DATABASE_FIXTURES & set(item.fixturenames))


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    # Real hashing costs ~0.3 s per user; tests check access rules, not hash strength.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def owner(db):
    return get_user_model().objects.create_user("owner", password="owner-pass-123")


@pytest.fixture
def other_user(db):
    return get_user_model().objects.create_user("other", password="other-pass-123")


@pytest.fixture
def staff_user(db):
    return get_user_model().objects.create_user("staff", password="staff-pass-123", is_staff=True)


@pytest.fixture
def admin_client_for_staff(db):
    """A test client logged in as a superuser, for the admin's pages."""
    staff = get_user_model().objects.create_user("boss", password="boss-pass-123", is_staff=True, is_superuser=True)
    client = Client()
    client.force_login(staff)
    return client


@pytest.fixture
def logged_in(client, owner):
    client.force_login(owner)
    return client


@pytest.fixture
def broker():
    with mock.patch("controlplane.celery.app.send_task") as send:
        yield send


@pytest.fixture
def owner_api(owner):
    return api_client_for(owner)


@pytest.fixture
def other_api(other_user):
    return api_client_for(other_user)


@pytest.fixture
def anon_api():
    return api_client_for(None)


@pytest.fixture
def staff_api(staff_user):
    return api_client_for(staff_user)


@pytest.fixture
def dataset(owner):
    return Dataset.objects.create(
        owner=owner, name="arith", source=Dataset.Source.GENERATOR, generator="arithmetic",
        generator_params={"count": 10, "difficulty": 1, "seed": 0}, columns=["prompt", "answer"],
        row_count=10, preview=[],
    )


@pytest.fixture
def reward(owner):
    return RewardFunction.objects.create(owner=owner, name="acc", kind="builtin", builtin="accuracy",
                                         params={"answer_column": "answer"})


@pytest.fixture
def config(owner):
    return TrainingConfig.objects.create(owner=owner, name="small", values=ConfigSchema(max_steps=5).model_dump())


@pytest.fixture
def run(owner, dataset, reward, config):
    created = Run.objects.create(owner=owner, name="r1", dataset=dataset, config_template=config,
                                 config=dict(config.values))
    RunReward.objects.create(run=created, reward_function=reward, weight=1.0)
    return created


@pytest.fixture
def started_run(run, django_capture_on_commit_callbacks):
    """A queued run with a known ingest token (the broker message is not sent)."""
    from unittest import mock

    from runs.training_runs.lifecycle import start_run

    with mock.patch("runs.training_runs.queueing.enqueue_execute_run"):
        started = start_run(run)
    token = started.issue_ingest_token()
    started.save()
    started.test_token = token
    return started


@pytest.fixture
def library_for(db):
    """Makes a dataset, reward, config and created run for any user: `library_for(user, "prefix")`."""

    def make(user, prefix: str) -> dict:
        dataset = Dataset.objects.create(owner=user, name=f"{prefix}-data", source=Dataset.Source.HUB,
                                         hub_id="openai/gsm8k")
        reward = RewardFunction.objects.create(owner=user, name=f"{prefix}-reward", kind="builtin", builtin="length",
                                               params={"min_tokens": 0, "max_tokens": 256, "soft_penalty_tokens": 64})
        config = TrainingConfig.objects.create(owner=user, name=f"{prefix}-config", values=ConfigSchema().model_dump())
        made = Run.objects.create(owner=user, name=f"{prefix}-run", dataset=dataset, config_template=config,
                                  config=dict(config.values))
        RunReward.objects.create(run=made, reward_function=reward, weight=1.0)
        return {"dataset": dataset, "reward": reward, "config": config, "run": made}

    return make


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory):
    """A real S3-compatible server (moto's), started once for the session."""
    server = S3Server(tmp_path_factory.mktemp("s3")).start()
    yield server
    server.stop()


@pytest.fixture
def s3_bucket(s3_server, settings, monkeypatch):
    """The artifact store set to a new, empty bucket on that server; its name."""
    for name, value in CREDENTIALS.items():
        monkeypatch.setenv(name, value)
    bucket = s3_server.new_bucket()
    settings.ARTIFACT_STORE_URL = f"s3://{bucket}/grpo"
    settings.ARTIFACT_STORE_ENDPOINT_URL = s3_server.url
    return bucket
