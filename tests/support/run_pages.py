"""The run page in tests: the data the server embeds in it for its scripts and, for the browser
tests, a library seeded on a live server, a run started from it, and the page once it is live."""
import json
import re

# The owner's library on a live server (tests/support/browser.py's users): a dataset, two rewards, a config.
LIBRARY = """
import json
from django.contrib.auth import get_user_model
from runs.models import Dataset, RewardFunction, TrainingConfig
from worker.trainer.config import TrainingConfig as Schema
owner = get_user_model().objects.get(username="owner")
dataset = Dataset.objects.create(owner=owner, name="arith", source="generator", generator="arithmetic",
                                 generator_params={"count": 10}, columns=["prompt", "answer"], row_count=10)
acc = RewardFunction.objects.create(owner=owner, name="accuracy", kind="builtin", builtin="accuracy")
fmt = RewardFunction.objects.create(owner=owner, name="format", kind="builtin", builtin="format")
config = TrainingConfig.objects.create(owner=owner, name="tiny", values=Schema(max_steps=10).model_dump(mode="json"))
print(json.dumps({"dataset": dataset.pk, "rewards": [acc.pk, fmt.pk], "config": config.pk}))
"""


def page_data(response) -> dict:
    match = re.search(r'<script id="run-data" type="application/json">(.*?)</script>', response.content.decode(), re.S)
    return json.loads(match.group(1))


def started_run(live_server, library, name: str) -> int:
    api = live_server.api("owner")
    created = api.post("/api/runs/", json={
        "name": name, "dataset": library["dataset"], "config_template": library["config"],
        "rewards": [{"reward_function": library["rewards"][0], "weight": 1.0}]})
    assert created.status_code == 201, created.text
    run_id = created.json()["id"]
    assert api.post(f"/api/runs/{run_id}/start/").status_code == 200
    return run_id


def wait_live(page):
    page.wait_for_selector("#live-indicator[data-state=live]")
