"""The Workers page in real Chromium, reached from the navigation, with a real Celery worker on
the live server's broker: the worker's row shows its pools and CPU devices."""
import time

import httpx

from tests.support.celery_worker import start_worker, stop_worker


def reload_until(page, selector: str, timeout_s: float = 60) -> None:
    """The page is a snapshot: reload it until `selector` is on it (a worker answers once it has started)."""
    deadline = time.monotonic() + timeout_s
    while page.locator(selector).count() == 0:
        assert time.monotonic() < deadline, f"{selector} not on {page.url} after {timeout_s} s"
        time.sleep(1)
        page.reload()


def test_the_navigation_leads_to_the_live_workers(page, live_server, artifacts_dir):
    worker = start_worker(live_server, "default,browser-pool", log_path=live_server.log_path.parent / "fleet.log")
    try:
        page.goto(live_server.url + "/runs/")
        page.click("nav[aria-label=Main] >> text=Workers")
        page.wait_for_url(live_server.url + "/workers/")
        assert page.locator("h1").inner_text() == "Workers"
        reload_until(page, "tr[data-worker] .worker-devices li")
        row = page.locator("tr[data-worker]").first
        assert row.locator(".worker-pools .badge").all_inner_texts() == ["default", "browser-pool"]
        assert "CPU cores" in row.locator(".worker-devices").inner_text()
        assert row.locator(".worker-runs").inner_text().strip() == "idle"
        page.screenshot(path=str(artifacts_dir / "workers-page.png"), full_page=True)
    finally:
        stop_worker(worker)


QUEUED_RUN = """
import json
from django.contrib.auth import get_user_model
from runs.models import Dataset, RewardFunction, Run, RunReward
from worker.trainer.config import TrainingConfig
owner = get_user_model().objects.get(username="owner")
dataset = Dataset.objects.create(owner=owner, name="d", source="generator", generator="arithmetic", row_count=1)
reward = RewardFunction.objects.create(owner=owner, name="acc", kind="builtin", builtin="accuracy")
run = Run.objects.create(owner=owner, name="waiting", dataset=dataset,
                         config={**TrainingConfig().model_dump(), "worker_pool": "nobody-listens"})
RunReward.objects.create(run=run, reward_function=reward)
run.enqueue()
token = run.issue_ingest_token()
run.save()
print(json.dumps({"run_id": run.pk, "token": token}))
"""


def test_a_queued_runs_note_about_its_pool_goes_when_a_worker_takes_it(page, live_server, artifacts_dir):
    seed = live_server.shell_json(QUEUED_RUN)
    page.goto(f"{live_server.url}/runs/{seed['run_id']}/")
    note = page.locator("#run-pool-waiting")
    assert "No live worker listens on pool 'nobody-listens'" in note.inner_text()
    page.screenshot(path=str(artifacts_dir / "run-waiting-for-a-worker.png"))
    page.wait_for_selector("#live-indicator[data-state=live]")
    # A worker took it after all (as a worker started on that pool would): the live status hides the note.
    event = {"seq": 1, "type": "status", "status": "starting", "message": ""}
    httpx.post(f"{live_server.url}/api/runs/{seed['run_id']}/events/", json={"source": "supervisor", "events": [event]},
               headers={"Authorization": f"Bearer {seed['token']}"}, timeout=10).raise_for_status()
    page.wait_for_selector("#run-status.status-starting")
    assert note.is_hidden()
