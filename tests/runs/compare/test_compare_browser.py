"""The compare page in real Chromium with three runs: overlaid charts with a legend, x axis
and smoothing, the sortable summary (by keyboard), the settings diff, samples side by side
(an environment's episodes as conversations)."""
import pytest

SEED = """
import datetime, json, math
from django.contrib.auth import get_user_model
from runs.models import Dataset, MetricPoint, RewardFunction, Run, RunReward, Sample
from worker.trainer.config import TrainingConfig
owner = get_user_model().objects.get(username="owner")
dataset = Dataset.objects.create(owner=owner, name="arith", source="generator", generator="arithmetic", row_count=10)
reward = RewardFunction.objects.create(owner=owner, name="acc", kind="builtin", builtin="accuracy")
t0 = datetime.datetime(2025, 1, 1, tzinfo=datetime.timezone.utc)
ids = []
for index, (lr, steps, final) in enumerate([(1e-6, 60, 0.5), (2e-5, 40, 0.9), (5e-6, 80, 0.2)]):
    run = Run.objects.create(owner=owner, name=f"lr-{lr:g}", dataset=dataset, status="succeeded",
                             config=TrainingConfig(learning_rate=lr, max_steps=steps).model_dump(),
                             started_at=t0, finished_at=t0 + datetime.timedelta(seconds=20 * steps),
                             current_step=steps)
    RunReward.objects.create(run=run, reward_function=reward)
    names = ["rollout/reward_mean", "system/generation_tokens_per_s"] + (["train/loss"] if index < 2 else [])
    MetricPoint.objects.bulk_create([
        MetricPoint(run=run, name=name, step=s, time=t0 + datetime.timedelta(seconds=20 * s),
                    value=(final * s / steps + 0.05 * math.sin(s)) if name.startswith("rollout")
                    else 600.0 + index if name.startswith("system") else 2.0 - s / steps)
        for name in names for s in range(1, steps + 1)])
    for step in (10, 20):
        Sample.objects.bulk_create([Sample(run=run, step=step, group=0, prompt="What is 2 + 3?",
                                           completion=f"run {index} says {4 + g}", total_reward=float(g))
                                    for g in range(2)])
    ids.append(run.pk)
print(json.dumps({"ids": ids}))
"""


@pytest.fixture(scope="module")
def three_runs(live_server):
    return live_server.shell_json(SEED)["ids"]


def open_compare(page, live_server, ids, query=""):
    page.goto(f"{live_server.url}/compare/?runs={','.join(map(str, ids))}{query}")
    page.wait_for_selector("#compare[data-state=ready]")


def test_three_runs_are_overlaid_per_metric_with_a_legend(page, live_server, three_runs, artifacts_dir):
    open_compare(page, live_server, three_runs)
    titles = page.locator(".chart h3").all_inner_texts()
    assert titles == ["rollout/reward_mean", "train/loss"]
    assert page.locator(".chart canvas").count() == 2
    # uPlot's legend: the x axis, then one entry per run in its own colour.
    legend = page.locator(".chart").first.locator(".u-legend .u-series")
    assert legend.count() == 4
    assert [legend.nth(i).locator(".u-label").inner_text() for i in range(1, 4)] == ["lr-1e-06", "lr-2e-05", "lr-5e-06"]
    colours = {legend.nth(i).locator(".u-marker").evaluate("e => getComputedStyle(e).borderColor") for i in range(1, 4)}
    assert len(colours) == 3
    assert "Not reported by lr-5e-06." in page.locator(".chart").nth(1).inner_text()
    assert page.evaluate("performance.getEntriesByName('grpo:compare-ready').length") == 1
    page.screenshot(path=str(artifacts_dir / "compare-three-runs.png"), full_page=True)


def test_the_x_axis_and_smoothing_change_the_charts_and_the_address(page, live_server, three_runs):
    open_compare(page, live_server, three_runs)
    x_label = page.locator(".chart").first.locator(".u-legend .u-series").first.locator(".u-label")
    assert x_label.inner_text() == "Step"
    page.focus("#x-axis")
    page.select_option("#x-axis", "time")
    page.wait_for_selector("#compare[data-state=ready]")
    assert page.url.endswith(f"/compare/?runs={','.join(map(str, three_runs))}&x=time")
    assert x_label.inner_text() == "Wall time (s)"
    page.focus("#smoothing")
    for _ in range(10):
        page.keyboard.press("ArrowRight")
    assert page.inner_text("#smoothing-value") == "0.20"
    assert "smooth=0.2" in page.url


def test_the_summary_sorts_by_a_column_from_the_keyboard(page, live_server, three_runs):
    open_compare(page, live_server, three_runs)

    def names():
        return page.locator("#summary-table tbody th").all_inner_texts()

    assert [name.strip() for name in names()] == ["lr-1e-06", "lr-2e-05", "lr-5e-06"]
    page.focus("#summary-table button[data-key=final_reward]")
    page.keyboard.press("Enter")
    assert [name.strip() for name in names()] == ["lr-5e-06", "lr-1e-06", "lr-2e-05"]
    page.keyboard.press("Enter")
    assert [name.strip() for name in names()] == ["lr-2e-05", "lr-1e-06", "lr-5e-06"]
    header = page.locator("#summary-table th", has=page.locator("button[data-key=final_reward]"))
    assert header.get_attribute("aria-sort") == "descending"
    assert "40 / 40" in page.locator("#summary-table tbody tr").first.inner_text()


def test_the_settings_diff_lists_what_differs_and_folds_the_rest(page, live_server, three_runs):
    open_compare(page, live_server, three_runs)
    differing = page.locator("#config-diff .diff-table").first
    assert "2 settings differ" in differing.locator("caption").inner_text()
    text = differing.inner_text()
    assert "config.learning_rate" in text and "config.max_steps" in text and "2e-05" in text
    folded = page.locator("#config-diff details.equal-settings")
    assert not folded.evaluate("e => e.open")
    assert "config.temperature" not in page.locator("#config-diff").inner_text()  # hidden while folded
    folded.locator("summary").focus()
    page.keyboard.press("Enter")
    assert folded.evaluate("e => e.open") and "config.temperature" in folded.inner_text()


def test_samples_show_the_same_prompt_from_each_run_at_a_chosen_step(page, live_server, three_runs):
    open_compare(page, live_server, three_runs)
    page.wait_for_selector(".sample-row")
    assert page.input_value("#sample-step") == "20"
    row = page.locator(".sample-row").first
    assert "What is 2 + 3?" in row.locator(".prompt").inner_text()
    columns = row.locator(".sample-column")
    assert columns.count() == 3
    assert "run 1 says 5" in columns.nth(1).inner_text() and "step 20" in columns.nth(1).inner_text()
    page.fill("#sample-step", "15")
    page.keyboard.press("Enter")
    page.wait_for_function("document.getElementById('samples-status').innerText.includes('before 15')")
    assert "step 10" in page.locator(".sample-column").first.inner_text()


def test_without_runs_the_page_says_how_to_pick_them(page, live_server, three_runs):
    page.goto(f"{live_server.url}/compare/")
    assert page.locator("a[href='/runs/']").first.is_visible()
    page.check(f"#pick-{three_runs[0]}")
    page.check(f"#pick-{three_runs[2]}")
    page.click("button:has-text('Compare')")
    page.wait_for_selector("#compare[data-state=ready]")
    # The picker lists the newest run first, and the address keeps that order.
    assert page.url.endswith(f"/compare/?runs={three_runs[2]},{three_runs[0]}")


def test_a_metric_is_added_from_the_keyboard_and_kept_in_the_address(page, live_server, three_runs):
    open_compare(page, live_server, three_runs)
    page.focus("#metric-picker summary")
    page.keyboard.press("Enter")
    box = "#metric-options input[value='system/generation_tokens_per_s']"
    page.focus(box)
    page.keyboard.press("Space")
    page.wait_for_function("document.querySelectorAll('.chart').length === 3")
    page.wait_for_selector("#compare[data-state=ready]")
    assert page.locator(".chart h3").all_inner_texts() == [
        "rollout/reward_mean", "system/generation_tokens_per_s", "train/loss"]
    assert page.evaluate("document.activeElement.value") == "system/generation_tokens_per_s"
    assert "metrics=rollout/reward_mean,system/generation_tokens_per_s,train/loss" in page.url.replace("%2F", "/")


EPISODES = """
import json
from django.contrib.auth import get_user_model
from runs.models import Dataset, Run, Sample
owner = get_user_model().objects.get(username="owner")
dataset = Dataset.objects.create(owner=owner, name="tools", source="generator", generator="arithmetic", row_count=4)
prompt = [{"role": "user", "content": "What is 6 * 7?", "tool_calls": [], "trained": False, "model_version": None,
           "num_tokens": 8, "error": ""}]
def said(text, calls=(), error=""):
    return {"role": "assistant", "content": text, "tool_calls": [{"name": n, "arguments": a} for n, a in calls],
            "trained": True, "model_version": 3, "num_tokens": 9, "error": error}
def answered(text, error=""):
    return {"role": "tool", "content": text, "tool_calls": [], "trained": False, "model_version": None,
            "num_tokens": 2, "error": error}
episodes = [[said("", [("calc", "6*7")]), answered("42"), said("42")],
            [said("", [("calc", "6x7")]), answered("", error="calc: bad expression"), said("43")]]
ids = []
for index, (turns, reason) in enumerate(zip(episodes, ["done", "max_turns"])):
    run = Run.objects.create(owner=owner, name=f"env-{index}", dataset=dataset, status="succeeded", config={})
    Sample.objects.create(run=run, step=5, group=0, prompt="<|im_start|>user\\nWhat is 6 * 7?",
                          completion=turns[-1]["content"], total_reward=1.0 - index, turns=prompt + turns,
                          end_reason=reason, model_version=3)
    ids.append(run.pk)
print(json.dumps({"ids": ids}))
"""


def test_episodes_side_by_side_read_as_conversations(page, live_server, artifacts_dir):
    ids = live_server.shell_json(EPISODES)["ids"]
    open_compare(page, live_server, ids)
    page.wait_for_selector(".sample-row .episode")
    row = page.locator(".sample-row").first
    assert "highlighted: trained tokens" in page.locator("#samples .episode-legend").inner_text()
    assert "What is 6 * 7?" in row.locator(".prompt-turns .turn-user").inner_text()  # the prompt once
    first, second = row.locator(".sample-column").nth(0), row.locator(".sample-column").nth(1)
    assert first.locator(".turn-user").count() == 0 and first.locator(".tool-call").inner_text() == "calc(6*7)"
    assert first.locator(".end-badge").inner_text() == "ended: done"
    assert second.locator(".end-badge").inner_text() == "ended: max_turns"
    assert "calc: bad expression" in second.locator(".turn.has-error .turn-error").inner_text()
    assert second.locator(".turn-assistant.trained").count() == 2
    page.locator("#samples").screenshot(path=str(artifacts_dir / "compare-episodes.png"))
