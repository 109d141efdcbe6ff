"""Evaluation results in real Chromium, against a live server: on the run page an evaluation
sent through the ingest API (as the trainer sends it) appears in the panel's table, its examples
and the evaluation chart; an example is followed across every evaluation, and keeps being
followed as new ones arrive. On the compare page, one example is followed in each run side by
side, with each run's example classes. Screenshots of both are saved."""
import pytest

from tests.support.ingest import Trainer
from tests.support.run_pages import LIBRARY, wait_live
from tests.support.evaluations import FIVE_CLASSES, evaluation_events

SEED = """
import json
from django.contrib.auth import get_user_model
from runs.models import Dataset, RewardFunction, Run, RunReward
from tests.support.evaluations import FIVE_CLASSES, PROMPTS, store_evaluations
from worker.trainer.config import TrainingConfig
owner = get_user_model().objects.get(username="owner")
dataset = Dataset.objects.create(owner=owner, name="sums", source="generator", generator="arithmetic", row_count=10)
reward = RewardFunction.objects.create(owner=owner, name="acc-c", kind="builtin", builtin="accuracy")
ids = []
for name, table, prompts in [
        ("five classes", FIVE_CLASSES, PROMPTS),
        ("fast learner", {0: [False, False, False, False, False], 10: [True, True, True, True, True]}, PROMPTS),
        ("other set", {0: [True, True]}, PROMPTS[3:])]:
    run = Run.objects.create(owner=owner, name=name, dataset=dataset, status="succeeded",
                             config=TrainingConfig(eval_steps=10, eval_holdout_fraction=0.2).model_dump())
    RunReward.objects.create(run=run, reward_function=reward)
    store_evaluations(run, table, prompts)
    ids.append(run.pk)
print(json.dumps({"ids": ids}))
"""


@pytest.fixture(scope="module")
def library(live_server):
    return live_server.shell_json(LIBRARY)


def evaluating_run(live_server, library) -> int:
    api = live_server.api("owner")
    created = api.post("/api/runs/", json={
        "name": "evaluated", "dataset": library["dataset"], "config_template": library["config"],
        "rewards": [{"reward_function": library["rewards"][0], "weight": 1.0}],
        "config": {"eval_steps": 10, "eval_holdout_fraction": 0.2}})
    assert created.status_code == 201, created.text
    run_id = created.json()["id"]
    assert api.post(f"/api/runs/{run_id}/start/").status_code == 200
    return run_id


def evaluate(trainer: Trainer, step: int, marks: list) -> None:
    """One evaluation as the trainer sends it; the Trainer numbers the events."""
    trainer.send(*[{name: value for name, value in event.items() if name != "seq"}
                   for event in evaluation_events(1, step, marks)])


def test_an_evaluation_arriving_live_fills_the_panel_and_an_example_is_followed(page, live_server, library,
                                                                                 artifacts_dir):
    run_id = evaluating_run(live_server, library)
    trainer = Trainer(live_server, run_id)
    trainer.status("starting")
    trainer.status("running")
    page.goto(f"{live_server.url}/runs/{run_id}/")
    wait_live(page)
    assert page.locator("#eval-empty").is_visible() and page.locator("#eval-off").count() == 0

    evaluate(trainer, 0, FIVE_CLASSES[0])  # before training: the first evaluation
    page.wait_for_selector("#eval-rows tr[data-step='0']")
    page.wait_for_selector("#eval-step-status >> text=Step 0: 5 examples")
    assert page.locator("#eval-outcomes li").count() == 5
    assert page.locator("#eval-outcomes li").nth(1).locator(".eval-mark").inner_text() == "✓ pass"
    trainer.metrics(1, 0.25)
    page.wait_for_selector('.chart-box[data-chart="eval"]')
    charts = page.locator("#charts-main .chart-box").evaluate_all("boxes => boxes.map(b => b.dataset.chart)")
    assert charts[:2] == ["reward", "eval"]  # next to the training reward, though it came first

    evaluate(trainer, 10, FIVE_CLASSES[10])
    page.wait_for_selector("#eval-step-status >> text=Step 10: 5 examples")  # it follows the newest
    row = page.locator("#eval-rows tr[data-step='10']")
    assert "↑ 2" in row.inner_text() and "↓ 1" in row.inner_text()
    page.select_option("#eval-outcome", "flipped")
    page.wait_for_selector("#eval-step-status >> text=Step 10: 3 examples")
    assert page.locator("#eval-outcomes li").evaluate_all("items => items.map(i => i.dataset.index)") == ["2", "3", "4"]

    page.wait_for_selector("#eval-example-rows tr[data-index='4']")
    page.locator("#eval-example-rows tr[data-index='4'] button.eval-follow").click()
    followed = page.locator("#eval-followed")
    followed.wait_for(state="visible")
    page.wait_for_selector("#eval-followed-rows tr[data-step='10']")
    assert "What is 5 + 5?" in page.locator("#eval-followed-prompt").inner_text()
    at_step_0 = page.locator("#eval-followed-rows tr[data-step='0']").inner_text()
    assert "✗ fail" in at_step_0 and "answer 4.0 at step 0: wrong" in at_step_0
    assert "answer 4.0 at step 10: right" in page.locator("#eval-followed-rows tr[data-step='10']").inner_text()

    evaluate(trainer, 20, FIVE_CLASSES[20])  # the followed example gains its answer at step 20, live
    page.wait_for_selector("#eval-followed-rows tr[data-step='20']")
    assert "answer 4.0 at step 20: wrong" in page.locator("#eval-followed-rows tr[data-step='20']").inner_text()
    assert "unstable" in page.locator("#eval-followed-summary").inner_text()
    page.select_option("#eval-class", "never_moved")
    assert page.locator("#eval-example-rows tr").evaluate_all("rows => rows.map(r => r.dataset.index)") == ["0", "1"]
    page.screenshot(path=str(artifacts_dir / "run-page-evaluation.png"), full_page=True)


def test_a_run_without_evaluation_says_how_to_turn_it_on(page, live_server, library):
    api = live_server.api("owner")
    run_id = api.post("/api/runs/", json={"name": "plain", "dataset": library["dataset"],
                                          "rewards": [{"reward_function": library["rewards"][0]}]}).json()["id"]
    page.goto(f"{live_server.url}/runs/{run_id}/")
    wait_live(page)
    assert "eval_steps" in page.locator("#eval-off").inner_text()
    assert page.locator("#eval-empty").is_hidden() and page.locator("#eval-body").is_hidden()


@pytest.fixture(scope="module")
def compared(live_server):
    return live_server.shell_json(SEED)["ids"]


def test_the_compare_page_follows_one_example_in_each_run(page, live_server, compared, artifacts_dir):
    page.goto(f"{live_server.url}/compare/?runs={','.join(map(str, compared))}")
    page.wait_for_selector("#follow-example[data-state=ready]")
    classes = page.locator("#eval-classes tbody tr")
    assert classes.count() == 3
    assert classes.nth(1).locator("td").all_inner_texts() == ["2", "5", "5", "0", "0", "0", "0"]

    options = page.locator("#follow-key option")
    assert options.count() == 5  # the keys at least two of the runs share
    assert options.first.inner_text().startswith("What is 4 + 4?")  # shared by all three: first
    columns = page.locator("#follow-view .eval-column")
    assert columns.count() == 3
    assert "answer 3.0 at step 10: wrong" in columns.nth(0).inner_text()
    assert "forgotten" in columns.nth(0).inner_text() and "learned" in columns.nth(1).inner_text()

    key = page.locator("#follow-key option").nth(3).get_attribute("value")
    page.select_option("#follow-key", key)
    page.wait_for_selector(f"#follow-view article[data-key='{key}']")
    assert "Not evaluated on this example." in columns.nth(2).inner_text()
    steps = columns.nth(1).locator(".eval-step").evaluate_all("blocks => blocks.map(b => b.dataset.step)")
    assert steps == ["0", "10"]
    page.screenshot(path=str(artifacts_dir / "compare-follow-example.png"), full_page=True)
