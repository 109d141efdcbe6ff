"""Pushing a checkpoint to the Hub from the run page, in real Chromium against a live server whose
HF_HUB_ENDPOINT is a stand-in Hub (tests/support/hub_server.py): the form opens from the
checkpoint's row, a mistake is shown in the form, a push is listed with its progress while it waits
for the control plane's consumer, followed until pushed once a real consumer runs, and its files
arrive."""
import json

import pytest

from tests.support.browser import LiveServer
from tests.support.controlplane_consumer import running_consumer
from tests.support.hub_server import HubServer

TOKEN = "hf_browser_token_0123456789"
FILES = {"model.safetensors": b"weights" * 100, "config.json": b"{}", "trainer_state.pt": b"optimizer"}
RUN_WITH_CHECKPOINT = """
import datetime, json
from pathlib import Path
from django.conf import settings
from django.contrib.auth import get_user_model
from runs.models import Checkpoint, Dataset, RewardFunction, Run, RunReward
from worker.trainer.config import TrainingConfig
owner = get_user_model().objects.get(username="owner")
dataset = Dataset.objects.create(owner=owner, name="d", source="generator", generator="arithmetic", row_count=1)
reward = RewardFunction.objects.create(owner=owner, name="acc", kind="builtin", builtin="accuracy")
run = Run.objects.create(owner=owner, name="pushed", dataset=dataset, config=TrainingConfig().model_dump(mode="json"))
RunReward.objects.create(run=run, reward_function=reward)
folder = Path(settings.RUNS_DIR) / str(run.pk) / "checkpoints" / "step-3"  # as the trainer writes it
folder.mkdir(parents=True)
for name, text in json.loads({files!r}).items():
    (folder / name).write_text(text)
Checkpoint.objects.create(run=run, step=3, path=str(folder), size_bytes=1024, model_version=3,
                          created_at=datetime.datetime.now(datetime.UTC))
print(json.dumps({{"run_id": run.pk}}))
"""


@pytest.fixture(scope="module")
def hub():
    with HubServer(token=TOKEN, user="tester") as server:
        yield server


@pytest.fixture(scope="module")
def live_server(tmp_path_factory, hub):
    """The module's server pushes to the stand-in Hub."""
    from tests.support.browser import USERS

    env = {"DJANGO_ALLOW_ASYNC_UNSAFE": "", "HF_HUB_ENDPOINT": hub.url}
    with LiveServer(tmp_path_factory.mktemp("live"), env=env) as server:
        server.shell_json(USERS)
        yield server


def run_with_checkpoint(server) -> int:
    files = json.dumps({name: data.decode() for name, data in FILES.items()})
    return server.shell_json(RUN_WITH_CHECKPOINT.format(files=files))["run_id"]


def test_a_checkpoint_is_pushed_to_the_hub_from_the_run_page(page, live_server, hub, artifacts_dir):
    run_id = run_with_checkpoint(live_server)
    page.goto(f"{live_server.url}/runs/{run_id}/")
    page.click("#checkpoint-rows button:has-text('Push to Hub')")
    assert page.locator("#hub-push-form").is_visible() and page.locator("#hub-push-step").inner_text() == "3"
    assert page.input_value("#hub-part") == "model" and page.is_checked("#hub-private")

    page.fill("#hub-repo", "no-owner")
    page.fill("#hub-token", TOKEN)
    page.click("#hub-push-submit")
    page.wait_for_selector("#hub-push-error >> text=must be owner/name")

    page.screenshot(path=str(artifacts_dir / "run-page-hub-push-form.png"), full_page=True)
    page.fill("#hub-repo", "tester/from-the-page")
    page.click("#hub-push-submit")
    page.wait_for_selector("#hub-push-form", state="hidden")
    assert page.input_value("#hub-token") == ""  # forgotten once the push was accepted
    waiting = page.locator("#hub-push-rows tr[data-status=pushing]")
    size = sum(len(data) for name, data in FILES.items() if name != "trainer_state.pt")
    assert f"0/2 files · 0 bytes of {size} bytes" in waiting.inner_text() and waiting.locator("progress").count() == 1
    assert "waiting for the control plane's queue" in waiting.inner_text() and hub.repos == {}
    page.screenshot(path=str(artifacts_dir / "run-page-hub-push-queued.png"), full_page=True)

    with running_consumer(live_server):
        page.wait_for_selector("#hub-push-rows tr[data-status=pushed]", timeout=90_000)  # followed by polling
    row = page.locator("#hub-push-rows tr").first
    assert "tester/from-the-page" in row.inner_text() and "pushed 2 files" in row.inner_text()
    assert row.locator("a", has_text="commit").get_attribute("href").startswith(f"{hub.url}/tester/from-the-page/")
    assert hub.repos["tester/from-the-page"].files == {n: d for n, d in FILES.items() if n != "trainer_state.pt"}
    assert TOKEN not in page.content()
    page.screenshot(path=str(artifacts_dir / "run-page-hub-pushes.png"), full_page=True)
