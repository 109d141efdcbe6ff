"""The home page's demo buttons in real Chromium, against a live server: the tool-use demo's button
starts its run (queued: no worker needed) and lands on that run's live page, which says what to
watch. A screenshot of the home page is saved."""
import re

from runs.demos.definitions import DEMOS


def test_the_home_page_offers_both_demos_with_what_to_watch(page, live_server, artifacts_dir):
    page.goto(live_server.url + "/")
    for key, demo in DEMOS.items():
        card = page.locator(".demo-card", has=page.locator(f"#demo-run-{key}"))
        assert demo.title in card.inner_text() and demo.watch in card.inner_text()
    page.screenshot(path=str(artifacts_dir / "home-demos.png"), full_page=True)


def test_the_tool_use_demo_button_lands_on_its_run_page(page, live_server):
    page.goto(live_server.url + "/")
    page.click("#demo-run-tool-use")
    page.wait_for_url(re.compile(r"/runs/\d+/$"))
    assert "Tool-use demo run 1" in page.locator("h1").inner_text()
    assert page.locator("#run-status").inner_text() == "Queued"
    assert DEMOS["tool-use"].watch in page.locator(".messages").inner_text()
