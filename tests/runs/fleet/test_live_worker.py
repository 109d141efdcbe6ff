"""A real Celery worker on the embedded (filesystem) broker appears in GET /api/workers/ with its
queues and its devices (this machine's CPU cores: it has no GPU here), and a queued run whose pool
it does not consume says so on its page. Nothing is stubbed: the control plane asks the broker,
the worker answers through Celery's inspection."""
import os
import time

import httpx

from tests.support.asgi_server import SEED_RUN, AsgiServer, logged_in_client
from tests.support.celery_worker import start_worker, stop_worker
from worker.devices import probe

SEED = SEED_RUN.replace("run.enqueue()", 'run.config["worker_pool"] = "nobody-listens"; run.enqueue()').replace(
    'print(json.dumps({"run_id": run.pk, "token": token}))',
    """from rest_framework.authtoken.models import Token
print(json.dumps({"run_id": run.pk, "api_token": Token.objects.create(user=owner).key}))""")


def wait_for_worker(api: httpx.Client, timeout_s: float = 60) -> dict:
    """The first worker once it has reported its devices (it probes them in the seconds after it starts)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        workers = api.get("/api/workers/").json()["workers"]
        if workers and workers[0]["devices"]:
            return workers[0]
        time.sleep(1)
    raise AssertionError(f"no worker with its devices in /api/workers/ after {timeout_s} s: {workers}")


def test_a_live_worker_appears_with_its_queues_and_cpu_devices(tmp_path):
    with AsgiServer(tmp_path) as server:
        seed = server.shell_json(SEED)
        api = httpx.Client(base_url=server.url, headers={"Authorization": f"Token {seed['api_token']}"}, timeout=10)
        assert api.get("/api/workers/").json()["workers"] == []
        worker = start_worker(server, "default,cpu")
        try:
            seen = wait_for_worker(api)
            page = logged_in_client(server, "owner", "owner-pass-123").get(f"/runs/{seed['run_id']}/").text
        finally:
            stop_worker(worker)
    assert seen["name"].startswith("celery@")
    assert seen["queues"] == ["default", "cpu"] and seen["runs"] == [] and seen["problem"] is None
    devices = seen["devices"]
    assert devices == probe().to_dict()  # what this machine has, looked for the same way here
    assert devices["cpu_cores"] == len(os.sched_getaffinity(0)) and devices["memory_mib"] > 0
    if not devices["gpus"]:  # a CPU machine, such as CI's
        assert devices["kind"] == "cpu" and devices["source"] == "none"
    assert "No live worker listens on pool &#x27;nobody-listens&#x27;" in page
