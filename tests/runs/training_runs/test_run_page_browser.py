"""The run page in real Chromium, against a live server: a run started from the new-run page,
then watched while events are injected through the ingest API (as a trainer sends them):
charts gain points, the completions browser shows samples (an environment's episodes as
conversations), the log and checkpoints fill in, the status badge follows, the buttons follow
what the server allows, cancel works; and after a dropped websocket the page re-fetches what
it missed and says it is live again. Screenshots of the run page and of an episode are saved."""
import re

import pytest

from tests.support.ingest import Trainer
from tests.support.run_pages import LIBRARY, started_run, wait_live

@pytest.fixture(scope="module")
def library(live_server):
    return live_server.shell_json(LIBRARY)


PROMPT_TURNS = [{"role": "system", "content": "You may call calc(expr) to compute."},
                {"role": "user", "content": "What is 17 * 23?"}]


def assistant(content, version, calls=(), trained=True, error=""):
    return {"role": "assistant", "content": content, "trained": trained, "model_version": version,
            "num_tokens": 10, "tool_calls": [{"name": name, "arguments": args} for name, args in calls], "error": error}


def tool(content, error=""):
    return {"role": "tool", "content": content, "num_tokens": 3, "error": error}


def episode(turns, end_reason, reward, advantage):
    return {"group": 0, "prompt": "<|im_start|>user\nWhat is 17 * 23?<|im_end|>\n", "completion": turns[-1]["content"],
            "rewards": {"accuracy": reward, "format": 1.0}, "total_reward": reward, "advantage": advantage,
            "model_version": 4, "staleness": 2, "num_tokens": 60, "finish_reason": "stop",
            "turns": PROMPT_TURNS + turns, "end_reason": end_reason}


# A tool call and its result, a malformed call answered with an error, the final answer.
SOLVED = episode([
    assistant("Let me compute it.", 4, calls=[("calc", '{"expr": "17*23"}')]), tool("391"),
    assistant("", 5, calls=[("calc", "{expr: 17*23")]), tool("", error="malformed tool call: arguments are not JSON"),
    assistant("17 * 23 = 391", 5)], "done", 1.0, 0.8)
# Guessing until the turn limit, the last turn cut off (sampled, not trained): long enough to fold.
GUESSING = episode(
    [turn for n in range(5) for turn in (assistant(f"guess {n}", 4, calls=[("calc", f'{{"expr": "17+{n}"}}')]),
                                          tool(str(17 + n)))]
    + [assistant("I give up", 6, trained=False)], "max_turns", 0.0, -0.8)


def chart_points(page, chart_id: str) -> int:
    box = page.locator(f'.chart-box[data-chart="{chart_id}"]')
    return int(box.get_attribute("data-points") or 0)


def wait_for_points(page, chart_id: str, count: int):
    page.wait_for_function(
        "([id, n]) => { const el = document.querySelector(`.chart-box[data-chart=\"${id}\"]`);"
        " return el && Number(el.dataset.points || 0) >= n; }", arg=[chart_id, count])


def test_a_run_started_from_the_new_run_page_opens_its_live_page(page, live_server, library):
    page.goto(live_server.url + "/runs/new/")
    page.fill("#id_name", "from the browser")
    page.select_option("#id_dataset", str(library["dataset"]))
    page.check(f"#reward-{library['rewards'][0]}")
    page.check(f"#reward-{library['rewards'][1]}")
    page.fill(f"#weight-{library['rewards'][1]}", "0.5")
    page.select_option("#id_config_template", str(library["config"]))
    assert page.input_value("#id_cfg-max_steps") == "10"  # the editor shows the chosen config
    page.click("#start-run")
    page.wait_for_url(re.compile(r"/runs/\d+/$"))
    assert page.locator("#run-status").inner_text() == "Queued"
    assert "from the browser" in page.locator("h1").inner_text()
    wait_live(page)


def test_a_mistake_on_the_new_run_page_is_shown_inline_and_focused(page, live_server, library):
    page.goto(live_server.url + "/runs/new/")
    page.select_option("#id_dataset", str(library["dataset"]))
    page.check(f"#reward-{library['rewards'][0]}")
    page.fill(f"#weight-{library['rewards'][0]}", "lots")
    page.click("#start-run")
    page.wait_for_selector("#error-summary")
    assert "valid number" in page.locator(f"#weight-{library['rewards'][0]}-error").inner_text()
    assert page.evaluate("document.activeElement.id") == f"weight-{library['rewards'][0]}"


def test_the_run_page_follows_events_as_a_trainer_sends_them(page, live_server, library, artifacts_dir, tmp_path):
    run_id = started_run(live_server, library, "watched")
    trainer = Trainer(live_server, run_id)
    page.goto(f"{live_server.url}/runs/{run_id}/")
    wait_live(page)
    assert page.locator("#charts-empty").is_visible()

    trainer.status("starting")
    trainer.status("running")
    page.wait_for_function("document.querySelector('#run-status').textContent === 'Running'")

    trainer.metrics(1, 0.25)
    wait_for_points(page, "reward", 1)
    assert page.locator('.chart-box[data-chart="loss"]').count() == 1
    trainer.metrics(2, 0.5)
    trainer.metrics(3, 0.75)
    wait_for_points(page, "reward", 3)
    wait_for_points(page, "loss", 3)  # each chart redraws on its own schedule (charts.js)
    assert chart_points(page, "loss") == 3
    assert page.locator("#run-step").inner_text() == "3"
    assert "s a step" in page.locator("#run-eta").inner_text()  # 7 steps left at 2 s each
    assert page.locator('#charts-more .chart-box[data-chart="metric:train/grad_norm"]').count() == 1

    trainer.samples(3, "2 + 2 = 4\n#### 4")
    page.wait_for_selector("#sample-groups .sample-group")
    groups = page.locator("#sample-groups")
    assert "#### 4" in groups.inner_text() and "What is 2 + 2?" in groups.inner_text()
    assert "length" in groups.inner_text() and "0.700" in groups.inner_text()
    assert groups.locator("details.fold").count() == 1  # the 40-line completion is folded

    trainer.log("loading the model")
    trainer.log("step 3 done", level="warning")
    page.wait_for_selector("#log-lines li.log-warning")
    page.select_option("#log-level", "warning")  # warnings and errors only, counted in the select
    assert page.locator("#log-level option:checked").inner_text() == "warnings and errors (1)"
    assert page.locator("#log-lines li:visible").all_inner_texts()[-1].endswith("step 3 done")
    assert page.locator("#log-lines li:visible", has_text="loading the model").count() == 0
    page.select_option("#log-level", "all")
    trainer.checkpoint(3, str(tmp_path / "step-3"))
    page.wait_for_selector("#checkpoint-rows tr")
    # Off screen the section is not rendered (content-visibility: auto), its text empty: read it in view.
    page.locator("#checkpoints").scroll_into_view_if_needed()
    page.wait_for_function("document.querySelector('#checkpoint-rows').innerText.includes('step 3')")

    page.screenshot(path=str(artifacts_dir / "run-page.png"), full_page=True)

    page.click("#action-cancel button")
    page.wait_for_selector(".messages >> text=Cancel requested")
    wait_live(page)
    assert page.locator("#run-cancelling").is_visible() and page.locator("#action-cancel").is_hidden()
    assert trainer.metrics(4, 0.8)["cancel_requested"] is True  # what the trainer hears back
    trainer.status("cancelled")
    page.wait_for_function("document.querySelector('#run-status').textContent === 'Cancelled'")
    page.wait_for_selector("#action-resume", state="visible")  # once the API has said so
    wait_for_points(page, "reward", 4)  # the page reloaded: the charts came back over REST


def test_the_buttons_follow_what_the_server_allows_after_each_status_change(page, live_server, library):
    run_id = started_run(live_server, library, "buttons")
    trainer = Trainer(live_server, run_id)
    run_url = f"{live_server.url}/api/runs/{run_id}/"
    asked = []
    page.on("request", lambda request: asked.append(request.url) if request.url == run_url else None)
    page.goto(f"{live_server.url}/runs/{run_id}/")
    wait_live(page)
    assert page.locator("#action-cancel").is_visible() and page.locator("#action-start").is_hidden()

    trainer.status("starting")
    trainer.status("running")
    page.wait_for_function("document.querySelector('#run-status').textContent === 'Running'")
    assert page.locator("#action-cancel").is_visible()
    live_server.api("owner").post(f"/api/runs/{run_id}/cancel/")  # from another tab, or a script
    page.wait_for_selector("#action-cancel", state="hidden")
    assert page.locator("#run-cancelling").is_visible() and page.locator("#action-resume").is_hidden()
    trainer.status("cancelled")
    page.wait_for_selector("#action-resume", state="visible")
    assert page.locator("#action-clone").is_visible() and page.locator("#action-cancel").is_hidden()
    assert len(asked) >= 4  # the page asked the API (at connection and after each status change)


def test_the_completions_browser_goes_back_to_any_step(page, live_server, library):
    run_id = started_run(live_server, library, "browsed")
    trainer = Trainer(live_server, run_id)
    trainer.status("starting")
    trainer.status("running")
    for step in (1, 2, 3):
        trainer.samples(step, f"answer of step {step}")
    page.goto(f"{live_server.url}/runs/{run_id}/")
    page.wait_for_selector("#sample-groups >> text=answer of step 3")
    page.click("#sample-older")
    page.wait_for_selector("#sample-groups >> text=answer of step 2")
    assert not page.is_checked("#sample-follow")
    page.select_option("#sample-step", "1")
    page.wait_for_selector("#sample-groups >> text=answer of step 1")
    trainer.samples(4, "answer of step 4")  # not followed: the chosen step stays
    page.wait_for_selector("#sample-step option[value='4']", state="attached")
    assert "answer of step 1" in page.locator("#sample-groups").inner_text()
    page.click("#sample-newest")
    page.wait_for_selector("#sample-groups >> text=answer of step 4")


def test_an_episode_reads_as_a_conversation(page, live_server, library, artifacts_dir):
    run_id = started_run(live_server, library, "episodes")
    trainer = Trainer(live_server, run_id)
    page.goto(f"{live_server.url}/runs/{run_id}/")
    wait_live(page)
    trainer.status("starting")
    trainer.status("running")
    trainer.episodes(7, SOLVED, GUESSING)
    page.wait_for_selector("#sample-groups .episode")
    groups = page.locator("#sample-groups")
    assert "highlighted: trained tokens" in groups.locator(".episode-legend").inner_text()
    # The shared prompt once, as messages; each episode from its first sampled turn.
    prompt = groups.locator(".sample-group .prompt")
    assert prompt.locator(".turn-system").count() == 1
    assert "What is 17 * 23?" in prompt.locator(".turn-user").inner_text()
    solved, guessing = (groups.locator(f"tr[data-sample] >> nth={i}") for i in (0, 1))
    assert solved.locator(".turn-user").count() == 0
    assert solved.locator(".end-badge").inner_text() == "ended: done"
    assert solved.locator(".turn-assistant.trained").count() == 3
    assert solved.locator(".tool-call").first.inner_text() == 'calc({"expr": "17*23"})'
    answer = solved.locator(".turn-tool").first
    assert answer.locator(".turn-role").inner_text().lower() == "tool · result of calc" and "391" in answer.inner_text()
    failed = solved.locator(".turn.has-error")
    assert failed.count() == 1 and "malformed tool call" in failed.locator(".turn-error").inner_text()
    assert failed.locator(".turn-error").evaluate("e => getComputedStyle(e).color") == "rgb(179, 38, 30)"
    versions = solved.locator(".turn-version").all_inner_texts()
    assert versions == ["v4 · 2 behind", "v5 · 1 behind", "v5 · 1 behind"]  # trained at version 6
    assert "1.00" in solved.inner_text() and "0.800" in solved.inner_text()  # accuracy, advantage

    assert guessing.locator(".end-badge").inner_text() == "ended: max_turns"
    assert guessing.locator(".turn-assistant.untrained .untrained-badge").inner_text() == "not trained"
    assert guessing.locator(".turn:visible").count() == 7  # 11 messages: the middle 4 folded
    more = guessing.locator(".turns-more button")
    assert more.inner_text() == "4 more turns — show all 11 turns"
    page.locator("#completions").screenshot(path=str(artifacts_dir / "run-page-episode.png"))
    more.click()
    assert guessing.locator(".turn:visible").count() == 11 and more.count() == 0
    assert "I give up" in guessing.inner_text()


def test_after_a_dropped_connection_the_page_catches_up_and_is_live_again(page, live_server, library):
    run_id = started_run(live_server, library, "reconnected")
    trainer = Trainer(live_server, run_id)
    trainer.status("starting")
    trainer.status("running")
    trainer.metrics(1, 0.1)
    routes, blocked = [], {"now": False}

    def through(route):
        if blocked["now"]:
            route.close(code=1011, reason="test: network down")
            return
        route.connect_to_server()
        routes.append(route)

    page.route_web_socket(re.compile(r"/ws/runs/\d+/$"), through)
    page.goto(f"{live_server.url}/runs/{run_id}/")
    wait_live(page)
    wait_for_points(page, "reward", 1)

    blocked["now"] = True
    routes[-1].close(code=1006, reason="test: connection dropped")
    page.wait_for_selector("#live-indicator[data-state=reconnecting]")
    assert "reconnecting" in page.locator("#live-text").inner_text()
    trainer.metrics(2, 0.2)  # sent while the page is not listening
    trainer.log("missed while away")
    trainer.samples(2, "missed sample")
    trainer.status("succeeded")
    blocked["now"] = False
    # "retry now" skips the back-off wait; the page may also have reconnected by itself already
    # (then the button is hidden and the click does nothing), so it is clicked from script.
    page.evaluate("document.getElementById('live-retry').click()")
    wait_live(page)
    wait_for_points(page, "reward", 2)
    page.wait_for_selector("#log-lines >> text=missed while away")
    page.wait_for_selector("#sample-groups >> text=missed sample")
    assert page.locator("#run-status").inner_text() == "Succeeded"


def test_a_socket_closed_for_lost_access_says_so_and_stops_reconnecting(page, live_server, library):
    run_id = started_run(live_server, library, "taken away")
    routes = []

    def through(route):
        route.connect_to_server()
        routes.append(route)

    page.route_web_socket(re.compile(r"/ws/runs/\d+/$"), through)
    page.goto(f"{live_server.url}/runs/{run_id}/")
    wait_live(page)
    routes[-1].close(code=4403, reason="test: access lost")  # runs.live.consumers.ACCESS_LOST
    page.wait_for_selector("#live-indicator[data-state=access-lost]")
    assert page.locator("#live-text").inner_text() == "You no longer have access to this run; reload the page"
    page.wait_for_timeout(1500)  # past the first reconnect delays (0.5 s, 1 s)
    assert len(routes) == 1 and page.locator("#live-retry").is_hidden()


def test_another_users_run_page_is_not_found(page, live_server, library):
    run_id = started_run(live_server, library, "private")
    other = live_server.api("other")
    assert other.get(f"/runs/{run_id}/").status_code == 404
    assert page.goto(f"{live_server.url}/runs/{run_id}/").status == 200


def test_a_long_prompt_previews_its_question_and_a_success_is_not_drawn_as_an_error(page, live_server, library):
    run_id = started_run(live_server, library, "plainly")
    trainer = Trainer(live_server, run_id)
    page.goto(f"{live_server.url}/runs/{run_id}/")
    wait_live(page)
    trainer.status("starting")
    trainer.status("running")
    system = "You are a careful assistant who shows every step of the working. " * 12
    chat = (f"<|im_start|>system\n{system}<|im_end|>\n<|im_start|>user\nWhat is 17 * 3?<|im_end|>\n"
            "<|im_start|>assistant\n")
    trainer.samples(1, "51", prompt=chat)
    page.wait_for_selector("#sample-groups .prompt details.fold summary")
    assert page.locator("#sample-groups .prompt summary").inner_text().startswith("What is 17 * 3?")
    trainer.status("succeeded", "trained 1 steps")
    page.wait_for_function("document.querySelector('#run-status').textContent === 'Succeeded'")
    reason = page.locator("#run-error")
    assert reason.inner_text() == "trained 1 steps" and "error" not in reason.get_attribute("class").split()
