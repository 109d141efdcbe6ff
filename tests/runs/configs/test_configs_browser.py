"""The config form in real Chromium: an invalid value is refused with the message next to
its field, then a valid one is saved and shown; a preset fills the form in place."""
import re

from worker.trainer.config import PRESETS


def test_an_invalid_value_is_shown_inline_then_a_valid_one_is_saved(page, live_server, artifacts_dir):
    page.goto(live_server.url + "/configs/new/")
    page.fill("#id_name", "tiny")
    page.fill("#id_cfg-num_generations", "1")
    page.click("button[type=submit]:has-text('Save config')")

    error = page.locator("#id_cfg-num_generations-error")
    assert "greater than or equal to 2" in error.inner_text()
    # The message sits in the same field block as its input, and the input says it is invalid.
    knob = page.locator("[data-knob=num_generations]")
    assert knob.locator("#id_cfg-num_generations-error").count() == 1
    assert page.get_attribute("#id_cfg-num_generations", "aria-invalid") == "true"
    assert page.evaluate("document.activeElement.id") == "error-summary"
    assert page.input_value("#id_name") == "tiny"  # what was typed is kept
    page.screenshot(path=str(artifacts_dir / "config-inline-error.png"), full_page=True)

    page.fill("#id_cfg-num_generations", "4")
    page.click("button[type=submit]:has-text('Save config')")
    page.wait_for_url(re.compile(r"/configs/\d+/$"))
    assert page.locator("h1").inner_text() == "tiny"
    row = page.locator("tr[data-knob=num_generations]")
    assert "4" in row.locator(".knob-value").inner_text() and "changed" in row.get_attribute("class")
    assert page.locator("tr[data-knob=max_steps] .knob-value").inner_text().strip() == "100"


def test_a_cross_field_problem_is_shown_on_the_field_to_change(page, live_server):
    page.goto(live_server.url + "/configs/new/")
    page.fill("#id_name", "uneven")
    page.fill("#id_cfg-per_device_train_batch_size", "6")
    page.click("button[type=submit]:has-text('Save config')")
    assert "multiple of num_generations" in page.inner_text("#id_cfg-per_device_train_batch_size-error")


def test_a_preset_fills_the_form_in_place_and_keeps_the_name(page, live_server):
    page.goto(live_server.url + "/configs/new/")
    page.fill("#id_name", "demo")
    page.click("[data-preset=cpu-demo]")
    assert page.url == live_server.url + "/configs/new/"  # no reload
    assert page.input_value("#id_cfg-max_steps") == "60"
    assert float(page.input_value("#id_cfg-learning_rate")) == PRESETS["cpu-demo"]["learning_rate"]
    assert page.input_value("#id_name") == "demo"

    page.click("[data-preset=gsm8k-one-gpu]")
    assert page.input_value("#id_cfg-worker_pool") == "gpu"
    assert not page.is_checked("#id_cfg-vllm_enforce_eager")
    page.click("button[type=submit]:has-text('Save config')")
    page.wait_for_url(re.compile(r"/configs/\d+/$"))
    assert page.locator("tr[data-knob=max_steps] .knob-value").inner_text().strip() == "500"


def test_clone_then_save_makes_a_second_config(page, live_server, artifacts_dir):
    api = live_server.api("owner")
    made = api.post("/api/configs/", json={"name": "base", "preset": "cpu-demo"})
    assert made.status_code == 201, made.text
    page.goto(live_server.url + f"/configs/{made.json()['id']}/")
    page.click("a:has-text('Clone')")
    assert page.input_value("#id_name") == "base (copy)"
    page.click("button[type=submit]:has-text('Save config')")
    page.wait_for_url(re.compile(r"/configs/\d+/$"))
    assert page.locator("h1").inner_text() == "base (copy)"
    assert page.locator("tr[data-knob=max_steps] .knob-value").inner_text().strip() == "60"
    page.screenshot(path=str(artifacts_dir / "config-detail.png"), full_page=True)
    page.goto(live_server.url + "/configs/")
    assert page.locator("table a:has-text('base (copy)')").count() == 1
    page.screenshot(path=str(artifacts_dir / "config-list.png"), full_page=True)
