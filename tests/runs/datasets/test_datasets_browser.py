"""Creating datasets in real Chromium: a file dropped on the drop zone goes to the API with
progress and opens a preview with the prompt column highlighted; the API's refusal shows next
to the field; a generator's parameters make a dataset."""
import json
import re

from tests.support.controlplane_consumer import running_consumer

ROWS = [{"question": f"What is {i} + {i}?", "answer": f"#### {2 * i}"} for i in range(40)]
JSONL = "".join(json.dumps(row) + "\n" for row in ROWS)

DROP = """([selector, name, text]) => {
    const transfer = new DataTransfer();
    transfer.items.add(new File([text], name, {type: "application/octet-stream"}));
    const zone = document.querySelector(selector);
    for (const type of ["dragenter", "dragover", "drop"]) {
        zone.dispatchEvent(new DragEvent(type, {dataTransfer: transfer, bubbles: true, cancelable: true}));
    }
}"""


def test_a_file_dropped_on_the_drop_zone_becomes_a_dataset_with_a_preview(page, live_server, artifacts_dir):
    page.goto(live_server.url + "/datasets/new/")
    page.evaluate(DROP, ["#dropzone", "gsm-sums.jsonl", JSONL])
    assert "gsm-sums.jsonl" in page.locator("#upload-file-chosen").inner_text()
    assert page.input_value("#upload-name") == "gsm-sums"  # named after the file
    page.fill("#upload-prompt_column", "question")
    page.click("#upload-submit")

    page.wait_for_url(re.compile(r"/datasets/\d+/$"))
    prompt_header = page.locator("#preview-table th.prompt-col")
    assert prompt_header.inner_text().startswith("question")
    assert page.locator("#preview-table tbody td.prompt-col").count() == 5
    assert page.locator("#preview-table tbody td.prompt-col").first.inner_text() == "What is 0 + 0?"
    highlight = prompt_header.evaluate("node => getComputedStyle(node).backgroundColor")
    plain = page.locator("#preview-table thead th").nth(1).evaluate("node => getComputedStyle(node).backgroundColor")
    assert highlight != plain
    assert page.inner_text("#row-count") == str(len(ROWS))
    page.screenshot(path=str(artifacts_dir / "dataset-detail.png"), full_page=True)


def test_the_apis_refusal_is_shown_next_to_the_field_and_nothing_is_stored(page, live_server):
    page.goto(live_server.url + "/datasets/new/")
    page.set_input_files("#upload-file", files=[{"name": "rows.jsonl", "mimeType": "application/octet-stream",
                                                 "buffer": JSONL.encode()}])
    page.fill("#upload-name", "wrong-column")
    page.click("#upload-submit")  # prompt column left at "prompt"; the file has "question"

    error = page.locator("#upload-prompt_column-error")
    error.wait_for(state="visible")
    assert "no column 'prompt'" in error.inner_text() and "question, answer" in error.inner_text()
    assert page.evaluate("document.activeElement.id") == "upload-prompt_column"
    assert page.locator("#upload-progress-box").is_hidden()
    stored = live_server.shell_json(
        "import json; from runs.models import Dataset; "
        "print(json.dumps({'n': Dataset.objects.filter(name='wrong-column').count()}))")
    assert stored["n"] == 0

    page.fill("#upload-prompt_column", "question")
    page.click("#upload-submit")
    page.wait_for_url(re.compile(r"/datasets/\d+/$"))
    assert page.locator("h1").inner_text() == "wrong-column"


def test_progress_is_shown_while_a_big_file_uploads(page, live_server):
    # About 6 MB: the upload reports progress events before the server answers.
    big = "".join(json.dumps({"question": f"Question {i} " + "x" * 60, "answer": str(i)}) + "\n"
                  for i in range(80_000))
    page.goto(live_server.url + "/datasets/new/")
    page.evaluate("""() => {
        // The bar's label changes with each progress event; keep them past the redirect.
        window.progressSeen = [];
        const bar = document.getElementById("upload-progress");
        new MutationObserver(() => window.progressSeen.push(bar.value))
          .observe(bar, {childList: true, characterData: true, subtree: true});
        window.addEventListener("beforeunload",
          () => sessionStorage.setItem("seen", JSON.stringify(window.progressSeen)));
    }""")
    page.set_input_files("#upload-file", files=[{"name": "big.jsonl", "mimeType": "application/octet-stream",
                                                 "buffer": big.encode()}])
    page.fill("#upload-prompt_column", "question")
    page.click("#upload-submit")
    page.wait_for_url(re.compile(r"/datasets/\d+/$"), timeout=60_000)
    seen = json.loads(page.evaluate("sessionStorage.getItem('seen')") or "[]")
    assert seen and max(seen) == 100
    # Over 4 MB: checked by the control plane's consumer, which the page follows without a reload.
    assert page.inner_text("#row-count") == "being checked"
    with running_consumer(live_server):
        page.wait_for_function("document.getElementById('row-count').innerText === '80000'", timeout=120_000)


def test_a_generator_dataset_is_made_from_its_parameters(page, live_server):
    page.goto(live_server.url + "/datasets/new/")
    page.fill("#generator-name", "sums")
    page.fill("#id_gen-arithmetic-count", "12")
    page.fill("#id_gen-arithmetic-difficulty", "9")
    page.click("#generator-form button[type=submit]")
    error = page.locator("#id_gen-arithmetic-difficulty-error")
    assert "less than or equal to 5" in error.inner_text()

    page.fill("#id_gen-arithmetic-difficulty", "2")
    page.click("#generator-form button[type=submit]")
    page.wait_for_url(re.compile(r"/datasets/\d+/$"))
    assert page.inner_text("#row-count") == "12"
    assert page.locator("#preview-table th.prompt-col").inner_text().startswith("prompt")


def test_the_upload_form_is_usable_from_the_keyboard(page, live_server, artifacts_dir):
    page.goto(live_server.url + "/datasets/new/")
    page.screenshot(path=str(artifacts_dir / "dataset-new.png"), full_page=True)
    page.focus("#upload-file")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "upload-name"
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "upload-prompt_column"
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "upload-submit"
    assert page.get_by_label("Choose a file").count() == 1
