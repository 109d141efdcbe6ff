"""Alarms in real Chromium: a trainer's spike shows on the open run page at once (run.alarm),
marked as having stopped the run when the run's config says so, and the runs list marks the run."""
import pytest

from tests.support.ingest import Trainer
from tests.support.run_pages import LIBRARY, wait_live

HEALTHY = {"rollout/reward_mean": 0.2, "train/entropy": 0.6, "train/kl_to_sampler": 0.01,
           "train/importance_ratio_max": 1.3, "rollout/clipped_ratio": 0.0}


@pytest.fixture(scope="module")
def library(live_server):
    return live_server.shell_json(LIBRARY)


def running_run(live_server, library, config: dict) -> tuple[int, Trainer]:
    api = live_server.api("owner")
    created = api.post("/api/runs/", json={
        "name": "watched for alarms", "dataset": library["dataset"], "config_template": library["config"],
        "rewards": [{"reward_function": library["rewards"][0], "weight": 1.0}], "config": config})
    assert created.status_code == 201, created.text
    run_id = created.json()["id"]
    assert api.post(f"/api/runs/{run_id}/start/").status_code == 200
    trainer = Trainer(live_server, run_id)
    trainer.status("starting")
    trainer.status("running")
    return run_id, trainer


def test_an_alarm_appears_live_and_says_it_stopped_the_run(page, live_server, library, artifacts_dir):
    run_id, trainer = running_run(live_server, library, {"alarm_stop_on": "sampler_drift"})
    page.goto(f"{live_server.url}/runs/{run_id}/")
    wait_live(page)
    assert page.locator("#alarms").is_hidden()

    trainer.send({"type": "metrics", "step": 1, "values": HEALTHY})
    reply = trainer.send({"type": "metrics", "step": 2, "values": {**HEALTHY, "train/importance_ratio_max": 80.0}})
    assert reply["cancel_requested"] is True

    page.wait_for_selector("#alarms #alarm-list li.alarm")
    row = page.locator("#alarm-list li.alarm")
    assert row.get_attribute("data-kind") == "sampler_drift"
    assert "step 2" in row.inner_text() and "importance ratio 80 above 20 at step 2" in row.inner_text()
    assert row.locator(".alarm-stopped").inner_text() == "stopped the run"
    assert page.locator("#alarms-count").inner_text() == "1"
    page.wait_for_selector("#run-cancelling", state="visible")
    page.screenshot(path=str(artifacts_dir / "run-page-alarm.png"), full_page=False)

    page.goto(f"{live_server.url}/runs/")
    mark = page.locator("tr", has_text="watched for alarms").locator(".alarm-mark")
    assert "sampler_drift" in mark.inner_text()
    assert "stopped the run: importance ratio 80" in mark.get_attribute("title")
