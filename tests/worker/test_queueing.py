"""A started run reaches a real Celery worker process, through the filesystem broker and through Redis.

The worker proves it got the message the only way a worker may: by reporting
to the ingest API, which the test then reads back over REST.
"""
import os
import time

import httpx
import pytest
import redis

from tests.support.asgi_server import SEED_RUN, AsgiServer
from tests.support.celery_worker import start_worker, stop_worker

REDIS_BROKER = os.environ.get("TEST_REDIS_BROKER_URL", "redis://127.0.0.1:6379/4")
SEED_TOKEN = SEED_RUN.replace(
    'print(json.dumps({"run_id": run.pk, "token": token}))',
    """from rest_framework.authtoken.models import Token
run.status = "created"; run.attempt = 0; run.config["worker_pool"] = POOL
# A model that does not exist (where the operator's models are): the worker fails the run at once,
# which proves it got the message.
from django.conf import settings
run.config["model"] = str(settings.MODELS_DIR / "model-for-queueing-test"); run.save()
print(json.dumps({"run_id": run.pk, "api_token": Token.objects.create(user=owner).key}))""")


def redis_available() -> bool:
    try:
        return redis.Redis.from_url(REDIS_BROKER, socket_connect_timeout=2).ping()
    except redis.RedisError:
        return False


needs_redis = pytest.mark.skipif(not redis_available() and os.environ.get("CI") != "true",
                                 reason=f"no Redis at {REDIS_BROKER}")


def start_run_through_api(server: AsgiServer, pool: str) -> tuple[httpx.Client, int]:
    seed = server.shell_json(f"POOL = {pool!r}\n" + SEED_TOKEN)
    api = httpx.Client(base_url=server.url, headers={"Authorization": f"Token {seed['api_token']}"}, timeout=10)
    response = api.post(f"/api/runs/{seed['run_id']}/start/")
    assert response.status_code == 200, response.text
    return api, seed["run_id"]


def wait_for_status(api: httpx.Client, run_id: int, wanted: str, timeout_s: float = 60) -> dict:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        run = api.get(f"/api/runs/{run_id}/").json()
        if run["status"] == wanted:
            return run
        time.sleep(0.5)
    raise AssertionError(f"run {run_id} is still {run['status']} after {timeout_s} s")


@pytest.mark.parametrize("broker", [pytest.param("", id="filesystem"),
                                    pytest.param(REDIS_BROKER, id="redis", marks=needs_redis)])
def test_started_run_reaches_a_worker_process(tmp_path, broker):
    if broker:
        redis.Redis.from_url(broker).flushdb()
    with AsgiServer(tmp_path, env={"CELERY_BROKER_URL": broker}) as server:
        api, run_id = start_run_through_api(server, pool="default")
        worker = start_worker(server, "default")
        try:
            run = wait_for_status(api, run_id, "failed")
        finally:
            stop_worker(worker)
        logs = api.get(f"/api/runs/{run_id}/logs/").json()["results"]
    assert "model-for-queueing-test' does not exist" in run["error_message"]
    assert any(f"received run {run_id}" in line["message"] for line in logs)


def test_run_goes_to_the_queue_its_config_names(tmp_path):
    with AsgiServer(tmp_path) as server:
        api, run_id = start_run_through_api(server, pool="cpu")
        default_worker = start_worker(server, "default")
        try:
            time.sleep(8)  # long enough for a wrongly routed message to be taken
            assert api.get(f"/api/runs/{run_id}/").json()["status"] == "queued"
        finally:
            stop_worker(default_worker)
        cpu_worker = start_worker(server, "cpu")
        try:
            wait_for_status(api, run_id, "failed")
        finally:
            stop_worker(cpu_worker)
