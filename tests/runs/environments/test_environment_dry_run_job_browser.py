"""A model-played dry run in real Chromium: the panel's request is queued (202), and the panel follows
it every second, queued, then turn k of n, to the episode when it is done, as the consumer writes
them (made here through the server's database, so that no model is loaded in this test)."""
import json
from pathlib import Path

import pytest

FOLLOW = """
import json
from runs.models import EnvironmentDryRun
dry_run = EnvironmentDryRun.objects.get()
{action}
print(json.dumps({{"ok": True}}))
"""


@pytest.fixture(scope="module")
def library(live_server):
    pytest.importorskip("transformers")
    from worker.trainer.models.tiny import build_tiny_model

    build_tiny_model(Path(live_server.env["DATA_DIR"]) / "models" / "tiny-llama")  # a model that may play here
    api = live_server.api("owner")
    dataset = api.post("/api/datasets/", json={"name": "sums", "source": "generator", "generator": "arithmetic",
                                               "generator_params": {"count": 20}}).json()
    reward = api.post("/api/reward-functions/", json={"name": "acc", "kind": "builtin", "builtin": "accuracy"}).json()
    environment = api.post("/api/environments/", json={
        "name": "feedback", "kind": "builtin", "builtin": "feedback", "dataset": dataset["id"],
        "params": {"turn_penalty": 0.0, "answer_column": "answer"}, "rubric": [{"reward_function": reward["id"]}]})
    assert environment.status_code == 201, environment.text
    # What the consumer will have played: a typed dry run's answer, as the model's.
    typed = api.post(f"/api/environments/{environment.json()['id']}/dry-run/", json={"turns": ["#### 6", "#### 7"]})
    assert typed.status_code == 200, typed.text
    return {"environment": environment.json(), "played": {**typed.json(), "player": "model", "model": "tiny-llama"}}


def consumer_does(server, action: str) -> None:
    server.shell_json(FOLLOW.format(action=action))


def test_the_panel_follows_a_queued_dry_run_to_its_episode(page, live_server, library):
    page.goto(live_server.url + f"/environments/{library['environment']['id']}/")
    page.check("#dry-player-model")
    page.select_option("#dry-model-select", label="tiny-llama (in " + live_server.env["DATA_DIR"] + "/models)")
    page.fill("#dry-max-turns", "2")
    page.click("#dry-run-button")
    page.wait_for_function("document.getElementById('dry-status').textContent.includes('queued')")
    assert "waiting for the control plane's consumer" in page.inner_text("#dry-status")
    consumer_does(live_server, "dry_run.mark_loading(); dry_run.mark_progress(2)")
    page.wait_for_function("document.getElementById('dry-status').textContent.includes('turn 2 of 2')")
    consumer_does(live_server, f"dry_run.finish(json.loads({json.dumps(json.dumps(library['played']))}))")
    page.wait_for_function("document.getElementById('dry-status').textContent.startsWith('Ended:')")
    assert "(tiny-llama played)" in page.inner_text("#dry-status")
    assert "#### 6" in page.inner_text("#dry-results")  # the episode, turn by turn
