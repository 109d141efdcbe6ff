"""Judges in a real browser: the reward page's form hides what does not apply, its dry run panel
follows a judge's dry run (scored by a real consumer against a stub endpoint behind a key) to each
raw answer beside its number, and the run page's completion browser shows a judge's answer beside
its score, as text, folded when long."""
import pytest

from tests.support.ingest import Trainer
from tests.support.run_pages import LIBRARY, started_run
from tests.support.stub_judge import KEY, stub_judge
from tests.support.controlplane_consumer import running_consumer

TEMPLATE = "Question: {prompt}\nExpected: {answer}\nAnswer: {completion}\nScore 0-10:"


@pytest.fixture(scope="module")
def library(live_server):
    return live_server.shell_json(LIBRARY)


@pytest.fixture(scope="module")
def judge(live_server, library):
    """An endpoint judge on a stub endpoint, made through the API with its key, and a consumer to score its dry runs."""
    with stub_judge() as base_url, running_consumer(live_server):
        created = live_server.api("owner").post("/api/reward-functions/", json={
            "name": "rubric", "kind": "judge", "api_key": KEY,
            "params": {"template": TEMPLATE, "endpoint": "url", "base_url": base_url, "model": "stub-judge"}})
        assert created.status_code == 201, created.text
        yield created.json()


def test_the_judge_form_shows_the_fields_of_the_chosen_mode_and_endpoint(page, live_server):
    page.goto(live_server.url + "/rewards/new/judge/")
    assert page.is_visible("#p-scale_max") and not page.is_visible("#p-labels")
    assert not page.is_visible("#p-base_url") and not page.is_visible("#api-key")  # served by default
    page.select_option("#p-mode", "choice")
    page.select_option("#p-endpoint", "url")
    assert page.is_visible("#p-labels") and not page.is_visible("#p-scale_max")
    assert page.is_visible("#p-base_url") and page.is_visible("#api-key")


def test_a_judges_dry_run_is_followed_to_each_raw_answer_beside_its_number(page, live_server, library, judge):
    page.goto(live_server.url + f"/rewards/{judge['id']}/")
    assert "A key is set" in page.locator("#api-key-state").inner_text() and KEY not in page.content()
    page.select_option("#dry-dataset", str(library["dataset"]))
    page.fill("#dry-rows", "2")
    page.click("#dry-load-rows")
    page.wait_for_selector("#dry-completion-1")
    page.fill("#dry-completion-0", "good\n---\nvague")
    page.fill("#dry-completion-1", "html")
    page.click("#dry-run-button")
    page.wait_for_selector(".dry-table", timeout=90_000)
    assert "Judge's answer" in page.locator(".dry-table thead").inner_text()
    assert page.locator(".dry-score").all_inner_texts() == ["0.8", "None", "0.7"]
    answers = page.locator(".dry-answer")
    assert answers.nth(0).inner_text() == '{"score": 8}'
    assert "I would rather not say." in answers.nth(1).inner_text()
    assert "unreadable answer" in answers.nth(1).locator(".error").inner_text()
    assert answers.nth(2).inner_text() == "<b>bold</b> 7" and answers.nth(2).locator("b").count() == 0


def test_the_completion_browser_shows_each_judges_answer_beside_its_score(page, live_server, library):
    run_id = started_run(live_server, library, "judged")
    trainer = Trainer(live_server, run_id)
    trainer.status("starting")
    trainer.status("running")
    long_answer = "The answer restates the question. " * 20 + "Score: 3"
    base = {"group": 0, "prompt": "What is 2 + 2?", "total_reward": 1.0, "advantage": 0.5, "model_version": 1,
            "staleness": 0, "num_tokens": 4, "finish_reason": "stop"}
    trainer.send({"type": "samples", "step": 1, "samples": [
        {**base, "completion": "four", "rewards": {"accuracy": 1.0, "rubric": 0.9},
         "judgements": {"rubric": "<script>alert(1)</script> 9"}},
        {**base, "completion": "5", "rewards": {"accuracy": 0.0, "rubric": 0.3}, "judgements": {"rubric": long_answer}},
        {**base, "completion": "?", "rewards": {"accuracy": 0.0, "rubric": None}, "judgements": {"rubric": None}}]})
    page.goto(f"{live_server.url}/runs/{run_id}/")
    page.wait_for_selector("#sample-groups td.judged")
    cells = page.locator("#sample-groups td.judged[data-reward=rubric]")
    assert cells.count() == 3
    assert cells.nth(0).locator(".judged-score").inner_text() == "0.90"
    assert cells.nth(0).locator(".judgement").inner_text() == "<script>alert(1)</script> 9"
    assert cells.nth(0).locator("script").count() == 0
    folded = cells.nth(1).locator("details.fold")
    assert folded.count() == 1 and not folded.locator("pre").is_visible()
    folded.locator("summary").click()
    assert folded.locator("pre").inner_text() == long_answer
    assert cells.nth(2).locator(".judgement").inner_text() == "no answer"
    # The accuracy column is no judge's: its cells hold only the score.
    assert page.locator("#sample-groups td.judged").count() == 3


def test_a_judges_measures_are_charted_together_not_one_chart_each(page, live_server, library):
    run_id = started_run(live_server, library, "judge charts")
    trainer = Trainer(live_server, run_id)
    trainer.status("starting")
    trainer.status("running")
    page.goto(f"{live_server.url}/runs/{run_id}/")
    trainer.send({"type": "metrics", "step": 1, "values": {
        "rollout/reward_mean": 0.5, "judge/rubric/latency_s_mean": 0.4, "judge/rubric/latency_s_max": 0.9,
        "judge/rubric/calls": 16, "judge/rubric/timeouts": 1, "judge/rubric/cost_usd_total": 0.02,
        "judge/rubric/disagreement": 0.25, "judge/rubric/pays_refused": 0.5}})
    page.wait_for_selector('.chart-box[data-chart="judge-agreement"]')
    for chart in ("judge-latency", "judge-calls", "judge-tokens"):
        assert page.locator(f'#charts .chart-box[data-chart="{chart}"]').count() == 1
    assert page.locator('.chart-box[data-chart^="metric:judge/"]').count() == 0
