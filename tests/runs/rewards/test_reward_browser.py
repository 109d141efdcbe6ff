"""Reward pages in a real browser: the code editor, errors on their line, the dry run panel, permission."""
import pytest

GRANT_OWNER = """
import json
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
get_user_model().objects.get(username="owner").groups.add(Group.objects.get(name="Reward authors"))
print(json.dumps({"ok": True}))
"""
FRAGILE = '''def second_word(text):
    return text.split()[1]

def reward(prompts, completions, answer, **columns):
    print("rows answer", answer[0])
    return [len(second_word(c)) / 10 for c in completions]
'''


@pytest.fixture(scope="module")
def library(live_server):
    live_server.shell_json(GRANT_OWNER)
    api = live_server.api("owner")
    dataset = api.post("/api/datasets/", json={"name": "sums", "source": "generator", "generator": "arithmetic",
                                               "generator_params": {"count": 20}})
    assert dataset.status_code == 201, dataset.text
    reward = api.post("/api/reward-functions/", json={"name": "fragile", "kind": "code", "source": FRAGILE})
    assert reward.status_code == 201, reward.text
    return {"dataset": dataset.json(), "reward": reward.json()}


def set_code(page, source: str) -> None:
    page.evaluate("source => document.querySelector('.CodeMirror').CodeMirror.setValue(source)", source)


def test_the_editor_highlights_python_numbers_lines_and_indents_with_tab(page, live_server, library):
    page.goto(live_server.url + "/rewards/new/code/")
    editor = page.locator(".CodeMirror")
    assert editor.is_visible()
    assert page.locator(".CodeMirror-linenumber").first.is_visible()
    assert page.locator(".CodeMirror .cm-keyword", has_text="def").first.is_visible()  # python mode is on
    set_code(page, "x = 1")
    page.locator(".CodeMirror-code").click()
    page.keyboard.press("End")
    page.keyboard.press("Enter")
    page.keyboard.press("Tab")
    page.keyboard.type("y")
    assert page.evaluate("document.querySelector('.CodeMirror').CodeMirror.getValue()") == "x = 1\n    y"
    page.keyboard.press("Escape")  # leaves the editor for the save button
    assert page.evaluate("document.activeElement.id") == "reward-save"


def test_saving_code_with_an_error_highlights_its_line_and_keeps_the_text(page, live_server, library):
    page.goto(live_server.url + "/rewards/new/code/")
    page.fill("#reward-name", "broken")
    set_code(page, "import re\n\ndef reward(prompts, completions, **columns)\n    return []\n")
    page.click("#reward-save")
    page.wait_for_selector("#source-errors .error")
    assert "line 3: syntax error" in page.locator("#source-errors").inner_text()
    highlighted = page.locator(".cm-error-line")
    assert highlighted.count() == 1 and "def reward" in highlighted.inner_text()
    page.click("#source-errors button.jump")  # jumps to the line
    assert page.evaluate("document.querySelector('.CodeMirror').CodeMirror.getCursor().line") == 2
    assert "def reward(prompts, completions, **columns)" in page.evaluate(
        "document.querySelector('.CodeMirror').CodeMirror.getValue()")


def test_a_dry_run_of_typed_completions_shows_scores_time_and_the_traceback(page, live_server, library):
    page.goto(live_server.url + f"/rewards/{library['reward']['id']}/")
    page.select_option("#dry-dataset", str(library["dataset"]["id"]))
    page.fill("#dry-rows", "2")
    page.click("#dry-load-rows")
    page.wait_for_selector("#dry-completion-1")
    assert "What is 7 - 1?" in page.locator(".dry-prompt").first.inner_text()
    page.fill("#dry-completion-0", "six is #### 6\n---\nseven is 7")
    page.fill("#dry-completion-1", "two")
    page.keyboard.press("Control+Enter")
    page.wait_for_selector(".dry-table")
    scores = page.locator(".dry-score").all_inner_texts()
    assert scores[:2] == ["0.2", "0.2"] and scores[2] == "—"
    assert "IndexError" in page.locator(".dry-error").inner_text()
    assert 'File "reward.py", line 2, in second_word' in page.locator(".dry-error pre").inner_text()
    assert "ms" in page.locator("#dry-status").inner_text()
    assert page.locator(".cm-error-line").count() == 1  # the failing line is marked in the editor
    page.locator(".dry-detail summary").first.click()
    assert "rows answer #### 6" in page.locator(".dry-detail pre").first.inner_text()


def test_unsaved_code_is_saved_before_the_dry_run(page, live_server, library):
    page.goto(live_server.url + f"/rewards/{library['reward']['id']}/")
    set_code(page, "def reward(prompts, completions, **columns):\n    return [0.5] * len(completions)\n")
    page.select_option("#dry-dataset", str(library["dataset"]["id"]))
    page.fill("#dry-rows", "1")
    page.click("#dry-load-rows")
    page.fill("#dry-completion-0", "anything")
    page.click("#dry-run-button")
    page.wait_for_selector(".dry-table")
    assert page.locator(".dry-score").all_inner_texts() == ["0.5"]
    stored = live_server.api("owner").get(f"/api/reward-functions/{library['reward']['id']}/").json()["source"]
    assert "[0.5]" in stored
    live_server.api("owner").patch(f"/api/reward-functions/{library['reward']['id']}/", json={"source": FRAGILE})


def test_a_builtin_is_created_from_its_generated_form_and_dry_runs(page, live_server, library):
    page.goto(live_server.url + "/rewards/new/builtin/")
    page.fill("#reward-name", "acc-browser")
    page.select_option("#reward-builtin", "accuracy")
    assert page.locator("#accuracy-answer_column").input_value() == "answer"
    assert page.locator("#length-max_tokens").is_hidden()
    page.click("form.reward-form button[type=submit]")
    page.wait_for_selector("#dry-run")
    page.select_option("#dry-dataset", str(library["dataset"]["id"]))
    page.fill("#dry-rows", "1")
    page.click("#dry-load-rows")
    page.fill("#dry-completion-0", "#### 6\n---\n#### 7")
    page.click("#dry-run-button")
    page.wait_for_selector(".dry-table")
    assert page.locator(".dry-score").all_inner_texts() == ["1.0", "0.0"]


def test_a_user_without_the_permission_sees_why_and_gets_no_editor(browser, live_server, library):
    from tests.support.browser import log_in

    context = browser.new_context()
    tab = context.new_page()
    try:
        log_in(tab, live_server, "other")
        tab.goto(live_server.url + "/rewards/")
        disabled = tab.locator(".button.disabled", has_text="New code reward")
        assert disabled.is_visible() and "Reward authors" in tab.locator("#code-refusal").inner_text()
        tab.goto(live_server.url + "/rewards/new/code/")
        assert tab.locator("#reward-save").count() == 0
        assert tab.evaluate("document.querySelector('.CodeMirror').CodeMirror.getOption('readOnly')") is True
    finally:
        context.close()


SEED_SAMPLES = """
import json
from django.contrib.auth import get_user_model
from runs.models import Dataset, Run, Sample
from worker.trainer.config import TrainingConfig
owner = get_user_model().objects.get(username="owner")
run = Run.objects.create(owner=owner, name="trained", dataset=Dataset.objects.get(owner=owner, name="sums"),
                         config=TrainingConfig().model_dump(), status="succeeded")
prompt = "<|im_start|>user\\nWhat is 7 - 1? Think briefly, then give the final answer as #### <number>.<|im_end|>"
for text in ("it is #### 6", "maybe #### 5"):
    Sample.objects.create(run=run, step=7, group=0, prompt=prompt, completion=text)
print(json.dumps({"run": run.pk}))
"""


def test_a_dry_run_of_a_runs_samples_at_a_step(page, live_server, library):
    seeded = live_server.shell_json(SEED_SAMPLES)
    page.goto(live_server.url + "/rewards/new/builtin/")
    page.fill("#reward-name", "acc-samples")
    page.select_option("#reward-builtin", "accuracy")
    page.click("form.reward-form button[type=submit]")
    page.wait_for_selector("#dry-run")
    page.check("input[name=dry-source][value=run]")
    assert page.locator("#dry-typed").is_hidden()
    page.select_option("#dry-run-select", str(seeded["run"]))
    assert page.locator("#dry-step").input_value() == "7"
    page.click("#dry-run-button")
    page.wait_for_selector(".dry-table")
    assert page.locator(".dry-completion").all_inner_texts() == ["it is #### 6", "maybe #### 5"]
    assert page.locator(".dry-score").all_inner_texts() == ["1.0", "0.0"]
