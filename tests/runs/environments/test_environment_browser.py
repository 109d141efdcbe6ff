"""The environment dry-run panel in a real browser: typed turns played through the sandbox, every
turn shown, unsaved code saved first, an error's line marked in the editor; the built-ins in one click."""
import pytest

GRANT_OWNER = """
import json
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
get_user_model().objects.get(username="owner").groups.add(Group.objects.get(name="Reward authors"))
print(json.dumps({"ok": True}))
"""
GUESS = '''TOOLS = {"hint": "A hint about the answer."}

def step(messages, row):
    last = messages[-1]
    if last.get("tool_calls"):
        return [{"role": "tool", "content": "it is even"}]
    print("heard", last["content"])
    if last["content"].strip().endswith(row["answer"].split("#### ")[-1]):
        return None
    return "no, try again"
'''


@pytest.fixture(scope="module")
def library(live_server):
    live_server.shell_json(GRANT_OWNER)
    api = live_server.api("owner")
    dataset = api.post("/api/datasets/", json={"name": "sums", "source": "generator", "generator": "arithmetic",
                                               "generator_params": {"count": 20}})
    assert dataset.status_code == 201, dataset.text
    reward = api.post("/api/reward-functions/", json={"name": "acc", "kind": "builtin", "builtin": "accuracy"})
    assert reward.status_code == 201, reward.text
    environment = api.post("/api/environments/", json={
        "name": "guess", "kind": "code", "source": GUESS, "dataset": dataset.json()["id"],
        "rubric": [{"reward_function": reward.json()["id"]}]})
    assert environment.status_code == 201, environment.text
    return {"dataset": dataset.json(), "environment": environment.json()}


def set_code(page, source: str) -> None:
    page.evaluate("source => document.querySelector('.CodeMirror').CodeMirror.setValue(source)", source)


def test_typed_turns_are_played_and_every_turn_is_shown(page, live_server, library):
    page.goto(live_server.url + f"/environments/{library['environment']['id']}/")
    assert page.locator("#dry-dataset").input_value() == str(library["dataset"]["id"])
    page.click("#dry-show-row")
    page.wait_for_selector(".dry-prompt")
    assert "What is 7 - 1?" in page.locator(".dry-prompt").inner_text()
    page.fill("#dry-turn-0", '<tool_call>{"name": "hint", "arguments": {}}</tool_call>')
    page.fill("#dry-turn-1", "it is 5")
    page.click("#dry-add-turn")
    page.fill("#dry-turn-2", "so it is 6")
    page.keyboard.press("Control+Enter")
    page.wait_for_selector(".episode")
    roles = page.locator(".turns .turn").evaluate_all("items => items.map(item => item.dataset.role)")
    assert roles == ["user", "assistant", "tool", "assistant", "user", "assistant"]
    assert page.locator(".tool-call").inner_text() == 'hint({})'
    assert "it is even" in page.locator(".turn-tool").inner_text()
    assert page.locator(".end-badge").inner_text() == "ended: done"
    assert "Ended: the environment ended the episode. 3 assistant turns" in page.locator("#dry-status").inner_text()
    assert page.locator("#dry-reward").inner_text() == "1"  # accuracy reads the last number, 6
    page.locator(".dry-calls summary").click()
    assert "heard it is 5" in page.locator(".dry-calls").inner_text()


def test_unsaved_code_is_saved_first_and_an_error_marks_its_line(page, live_server, library):
    environment = library["environment"]
    page.goto(live_server.url + f"/environments/{environment['id']}/")
    set_code(page, "def step(messages, row):\n    total = 0\n    return row['missing']\n")
    page.fill("#dry-turn-0", "#### 6")
    page.click("#dry-run-button")
    page.wait_for_selector("#dry-episode-error")
    error = page.locator("#dry-episode-error").inner_text()
    assert "exception (line 3)" in error and "KeyError" in error
    assert 'File "environment.py", line 3, in step' in error
    marked = page.locator(".cm-error-line")
    assert marked.count() == 1 and "row['missing']" in marked.inner_text()
    assert page.locator(".end-badge").inner_text() == "ended: environment_error"
    stored = live_server.api("owner").get(f"/api/environments/{environment['id']}/").json()["source"]
    assert "row['missing']" in stored
    live_server.api("owner").patch(f"/api/environments/{environment['id']}/", json={"source": GUESS})


def test_the_builtin_calculator_made_in_one_click_answers_a_call(page, live_server, library):
    page.goto(live_server.url + "/environments/")
    page.click("#make-builtins")
    page.wait_for_selector("#environments")
    page.click("#environments a:has-text('Calculator: arithmetic')")
    page.wait_for_selector("#dry-run")
    page.fill("#dry-turn-0", "<calculate>12 * 3</calculate>")
    page.fill("#dry-turn-1", "#### 36")
    page.click("#dry-run-button")
    page.wait_for_selector(".episode")
    assert page.locator(".tool-call").last.inner_text() == "calculate(12 * 3)"
    assert page.locator(".turn-tool").last.inner_text().strip().endswith("36")
    assert page.locator(".end-badge").inner_text() == "ended: done"
    assert page.locator("#dry-reward").inner_text() in ("0", "1")  # row 1 of the difficulty-3 problems
