"""The run page's "Where the time goes" panel, in-flight chart and held-out interval in real
Chromium, against a live server and its real diagnosis endpoint: a run whose steps wait for
rollouts shows the API's sentence, a bar split into its parts and the suggestions, each knob
linked to its row in the Config section; a run with no suggestion says that nothing stands out
only where nothing does (balanced), and otherwise that no config knob moves what the sentence
names; a run too short to diagnose says so and draws no bar;
a diagnosis that fails to load is a note in the panel, the rest of the page drawn; a live run's
panel is asked again every ten logged steps (every step while too short), at most every 15 s (the
page's clock moved on, not waited for).
The evaluation chart draws each evaluation's 95% interval and, for a run on an environment, its
tool use beside the held-out pass@1. Screenshots are saved."""
import json
import math

import pytest

from tests.support.ingest import Trainer
from tests.support.run_pages import LIBRARY, wait_live

# Each step waits 7 of its 10 seconds for rollouts, a tiny in-flight cap (2, of 4 groups the
# staleness bound allows ahead) full and holding submission back.
WAITING_STEP = {
    "system/step_time_s": 10.0, "async/wait_for_rollouts_s": 7.0, "system/train_seconds": 2.5,
    "system/weight_sync_s": 0.3, "system/generation_tokens_per_s": 900.0, "system/training_tokens_per_s": 5200.0,
    "async/staleness_mean": 0.8, "async/staleness_max": 1.0, "async/dropped_stale": 0.0, "async/queue_depth": 0.0,
    "async/in_flight": 2.0, "async/max_inflight": 2.0, "async/ahead_bound": 4.0, "async/blocked_by_inflight_cap": 0.85,
    "async/blocked_by_staleness": 0.05, "rollout/group_generation_s": 6.5, "rollout/group_scoring_s": 0.05,
    "rollout/reward_mean": 0.3,
}
# The server slower than the trainer, neither bound holding submission back, on a device the
# config does not tell: a bottleneck named, no knob of the config suggested.
UNMOVED_STEP = {**WAITING_STEP, "async/blocked_by_inflight_cap": 0.05, "async/in_flight": 1.0}
# No part above a quarter of the step, training under half of it: nothing stands out.
BALANCED_STEP = {**WAITING_STEP, "async/wait_for_rollouts_s": 2.0, "system/train_seconds": 4.0,
                 "system/weight_sync_s": 0.5}
# Held-out pass marks of 40 examples: 10 pass before training, 26 after ten steps.
EVALUATIONS = {0: [i < 10 for i in range(40)], 10: [i < 26 for i in range(40)]}
SEED = """
import json
from django.contrib.auth import get_user_model
from runs.models import Dataset, RewardFunction, Run, RunReward
from tests.support.evaluations import store_evaluations
from tests.support.telemetry import add_metrics
from worker.trainer.config import TrainingConfig
owner = get_user_model().objects.get(username="owner")
dataset = Dataset.objects.create(owner=owner, name="sums-d", source="generator", generator="arithmetic", row_count=10)
reward = RewardFunction.objects.create(owner=owner, name="acc-d", kind="builtin", builtin="accuracy")
step = json.loads({step!r})
steps = json.loads({steps!r})
evaluations = {{int(k): v for k, v in json.loads({evaluations!r}).items()}}

def stored_run(name, count, values=step, **config):
    run = Run.objects.create(owner=owner, name=name, dataset=dataset, status="succeeded",
                             config=TrainingConfig(max_inflight_tasks=2, **config).model_dump(mode="json"))
    RunReward.objects.create(run=run, reward_function=reward)
    for n in range(1, count + 1):
        add_metrics(run, n, **values)
    return run

waiting = stored_run("waiting", 12)
short = stored_run("short", 2)
tools = stored_run("tool user", 10, eval_steps=10, eval_holdout_fraction=0.2)
store_evaluations(tools, evaluations)
for n in range(1, 11):
    add_metrics(tools, n, **{{"episode/clean_tool_use": 0.2 + 0.05 * n}})
add_metrics(tools, 0, **{{"eval/episode/clean_tool_use": 0.25}})
add_metrics(tools, 10, **{{"eval/episode/clean_tool_use": 0.7}})
unmoved = stored_run("unmoved", 12, steps["unmoved"])
balanced = stored_run("balanced", 12, steps["balanced"])
print(json.dumps({{"waiting": waiting.pk, "short": short.pk, "tools": tools.pk, "unmoved": unmoved.pk,
                  "balanced": balanced.pk}}))
"""


# Counts the page's requests for the diagnosis, as it makes them.
COUNT_DIAGNOSIS_FETCHES = """
window.diagnosisFetches = 0;
const fetchOnce = window.fetch;
window.fetch = (url, ...rest) => {
  if (String(url).includes("/diagnosis/")) window.diagnosisFetches += 1;
  return fetchOnce(url, ...rest);
};
"""


@pytest.fixture(scope="module")
def runs(live_server):
    return live_server.shell_json(SEED.format(step=json.dumps(WAITING_STEP),
                                              steps=json.dumps({"unmoved": UNMOVED_STEP, "balanced": BALANCED_STEP}),
                                              evaluations=json.dumps({str(k): v for k, v in EVALUATIONS.items()})))


@pytest.fixture(scope="module")
def library(live_server):
    return live_server.shell_json(LIBRARY)


def diagnosis_of(live_server, run_id: int) -> dict:
    response = live_server.api("owner").get(f"/api/runs/{run_id}/diagnosis/")
    assert response.status_code == 200, response.text
    return response.json()


def wilson(passed: int, n: int, z: float = 1.96) -> tuple[float, float]:
    rate = passed / n
    centre = (rate + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(rate * (1 - rate) / n + z * z / (4 * n * n))
    return centre - half, centre + half


def test_a_run_waiting_for_rollouts_shows_the_sentence_the_split_and_a_suggestion(page, live_server, runs,
                                                                                   artifacts_dir):
    expected = diagnosis_of(live_server, runs["waiting"])
    assert expected["status"] == "ok" and expected["suggestions"]
    page.goto(f"{live_server.url}/runs/{runs['waiting']}/")
    page.wait_for_selector("#diagnosis[data-state=ok]")
    assert page.locator("#diagnosis-sentence").inner_text() == expected["sentence"]
    assert page.locator("#diagnosis").get_attribute("data-bottleneck") == expected["bottleneck"] == "generation"

    widths = page.locator("#diagnosis-bar .time-part").evaluate_all(
        "parts => Object.fromEntries(parts.map(p => [p.dataset.part, p.getBoundingClientRect().width]))")
    assert max(widths, key=widths.get) == "waiting_for_rollouts"
    assert {"waiting_for_rollouts", "training"} <= widths.keys()
    waiting = page.locator("#diagnosis-legend li[data-part=waiting_for_rollouts]").inner_text()
    assert "waiting for rollouts" in waiting and "7 s" in waiting and "70%" in waiting
    assert "900" in page.locator("#diagnosis-throughput [data-rate=generation]").inner_text()
    assert "5200" in page.locator("#diagnosis-throughput [data-rate=training]").inner_text()
    assert "cap 2" in page.locator("#diagnosis-queue").inner_text()

    items = page.locator("#diagnosis-suggestions li")
    assert items.count() == len(expected["suggestions"])
    for n, suggestion in enumerate(expected["suggestions"]):
        text = items.nth(n).inner_text()
        assert f"{suggestion['knob']}: {suggestion['current']} → {suggestion['proposed']}" in text
        assert suggestion["why"] in text
    first = expected["suggestions"][0]
    items.first.locator("a").first.click()  # the knob's row in the Config section
    assert page.evaluate("location.hash") == f"#config-{first['knob']}"
    assert page.locator(f"#config-{first['knob']}").is_visible()

    # The in-flight chart: in flight, queued and the cap on one chart.
    page.locator('.chart-box[data-chart="queue"]').scroll_into_view_if_needed()
    page.wait_for_selector('.chart-box[data-chart="queue"][data-points="12"]')
    labels = page.locator('.chart-box[data-chart="queue"] .u-legend .u-series th').all_inner_texts()
    assert {"groups in flight", "scored groups queued", "in-flight cap"} <= {label.strip() for label in labels}
    page.locator("#diagnosis").screenshot(path=str(artifacts_dir / "run-page-diagnosis.png"))


@pytest.mark.parametrize("name, bottleneck, note", [
    ("unmoved", "generation", "No config knob moves this one: see above."),
    ("balanced", "balanced", "No setting to change: nothing stands out as holding the run back."),
])
def test_without_a_suggestion_nothing_stands_out_only_where_the_run_is_balanced(page, live_server, runs, name,
                                                                                bottleneck, note):
    expected = diagnosis_of(live_server, runs[name])
    assert (expected["bottleneck"], expected["suggestions"]) == (bottleneck, [])
    page.goto(f"{live_server.url}/runs/{runs[name]}/")
    page.wait_for_selector("#diagnosis[data-state=ok]")
    assert page.locator("#diagnosis-no-suggestion").inner_text() == note
    assert page.locator("#diagnosis-suggestions li").count() == 0


def test_a_run_too_short_to_diagnose_says_so_without_a_bar(page, live_server, runs):
    expected = diagnosis_of(live_server, runs["short"])
    assert expected["status"] == "too_short"
    page.goto(f"{live_server.url}/runs/{runs['short']}/")
    page.wait_for_selector("#diagnosis[data-state=too_short]")
    sentence = page.locator("#diagnosis-sentence")
    assert sentence.inner_text() == expected["sentence"] and "muted" in sentence.get_attribute("class")
    assert page.locator("#diagnosis-body").is_hidden()


def test_a_diagnosis_that_fails_to_load_is_a_note_and_the_page_goes_on(page, live_server, runs):
    page.route("**/diagnosis/", lambda route: route.fulfill(status=503, content_type="application/json",
                                                             body='{"detail": "down for a moment"}'))
    page.goto(f"{live_server.url}/runs/{runs['waiting']}/")
    page.wait_for_selector("#diagnosis[data-state=failed]")
    assert "Could not load the diagnosis" in page.locator("#diagnosis-note").inner_text()
    assert page.locator("#diagnosis-body").is_hidden()
    page.wait_for_selector('.chart-box[data-chart="reward"][data-points="12"]')


def test_a_live_runs_panel_is_asked_again_as_steps_arrive_at_most_every_15_s(page, live_server, library):
    api = live_server.api("owner")
    created = api.post("/api/runs/", json={
        "name": "live diagnosis", "dataset": library["dataset"], "config_template": library["config"],
        "rewards": [{"reward_function": library["rewards"][0], "weight": 1.0}],
        "config": {"max_steps": 50, "max_inflight_tasks": 2}})
    assert created.status_code == 201, created.text
    run_id = created.json()["id"]
    assert api.post(f"/api/runs/{run_id}/start/").status_code == 200
    trainer = Trainer(live_server, run_id)
    trainer.status("starting")
    trainer.status("running")
    page.add_init_script(COUNT_DIAGNOSIS_FETCHES)
    page.clock.install()
    page.goto(f"{live_server.url}/runs/{run_id}/")
    wait_live(page)
    page.wait_for_selector("#diagnosis[data-state=too_short]")

    def steps(first: int, last: int) -> None:
        for step in range(first, last + 1):
            trainer.send({"type": "metrics", "step": step, "values": WAITING_STEP})
        page.wait_for_selector(f'.chart-box[data-chart="reward"][data-points="{last}"]')

    def asked(times: int) -> None:
        page.wait_for_function("n => window.diagnosisFetches >= n", arg=times)
        assert page.evaluate("window.diagnosisFetches") == times

    def sentence_is_the_apis() -> None:
        expected = diagnosis_of(live_server, run_id)["sentence"]
        page.wait_for_function("s => document.querySelector('#diagnosis-sentence').textContent === s", arg=expected)

    asked(1)  # on load
    steps(1, 3)  # too short: asked again at the next step, its count kept up
    page.clock.run_for(20_000)
    asked(2)
    sentence_is_the_apis()
    assert page.locator("#diagnosis").get_attribute("data-state") == "too_short"
    steps(4, 8)
    page.clock.run_for(20_000)
    asked(3)
    page.wait_for_selector("#diagnosis[data-state=ok]")
    sentence_is_the_apis()

    steps(9, 17)  # nine steps: not asked again
    page.clock.run_for(20_000)
    asked(3)
    steps(18, 18)  # the tenth, 15 s and more after the last time: asked at once
    asked(4)
    steps(19, 28)  # ten more at once: asked 15 s after the last time, not before
    page.clock.run_for(5_000)
    asked(4)
    page.clock.run_for(11_000)
    asked(5)


def test_the_evaluation_chart_draws_each_interval_and_tool_use_beside_it(page, live_server, runs, artifacts_dir):
    page.goto(f"{live_server.url}/runs/{runs['tools']}/")
    chart = page.locator("#eval-chart")
    chart.scroll_into_view_if_needed()
    page.wait_for_selector('#eval-chart[data-error-bars="2"]')
    caption = page.locator("#eval-chart-caption").inner_text()
    assert "95% interval" in caption and "n = 40 examples" in caption
    for step, marks in EVALUATIONS.items():
        low, high = wilson(sum(marks), len(marks))
        row = page.locator(f"#eval-rows tr[data-step='{step}']").inner_text()
        assert f"{low:.2f}–{high:.2f}" in row
    labels = {label.strip() for label in chart.locator(".u-legend .u-series th").all_inner_texts()}
    assert {"held-out pass@1", "held-out clean tool use", "clean tool use in training"} <= labels
    page.wait_for_selector('#eval-chart[data-points="11"]')  # steps 0..10: evaluations and training steps
    chart.screenshot(path=str(artifacts_dir / "run-page-heldout-interval.png"))
