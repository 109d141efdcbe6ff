"""A dataset being checked, in real Chromium: its page shows the rows and bytes read as the consumer
records them, and when the check ends swaps in the finished page (preview, or why it was refused)
without reloading. The consumer's writes are made here through the server's database."""
import json

import pytest

MADE = """
import json
from django.contrib.auth import get_user_model
from runs.models import Dataset
owner = get_user_model().objects.get(username="owner")
made = {name: Dataset.objects.create(owner=owner, name=name, source="upload", prompt_column="question",
                                     state="checking", check_progress={"rows": 0, "bytes": 0, "total_bytes": 4096}).pk
        for name in ("big", "broken")}
print(json.dumps(made))
"""


def consumer_writes(server, dataset_id: int, **fields) -> None:
    written = json.dumps(json.dumps(fields))
    server.shell_json(f"import json; from runs.models import Dataset; "
                      f"Dataset.objects.filter(pk={dataset_id}).update(**json.loads({written})); "
                      f"print(json.dumps({{'ok': True}}))")


@pytest.fixture(scope="module")
def checking(live_server):
    return live_server.shell_json(MADE)


def test_the_page_follows_the_check_and_shows_the_preview_without_a_reload(page, live_server, checking):
    page.goto(f"{live_server.url}/datasets/{checking['big']}/")
    assert "0 rows checked" in page.inner_text("#check-progress-text")
    page.evaluate("window.sameDocument = true")
    consumer_writes(live_server, checking["big"], check_progress={"rows": 2000, "bytes": 2048, "total_bytes": 4096})
    page.wait_for_function("document.getElementById('check-progress-text').textContent.startsWith('2000 rows')")
    assert page.inner_text("#check-progress-text") == "2000 rows checked, 2.0 KiB of 4.0 KiB"
    consumer_writes(live_server, checking["big"], state="ready", row_count=3000, columns=["question"],
                    preview=[{"question": "What is 1 + 1?"}])
    page.wait_for_selector("#preview-table")
    assert page.inner_text("#row-count") == "3000" and page.locator("#dataset-check").count() == 0
    assert page.evaluate("window.sameDocument") is True


def test_a_refusal_appears_in_place_naming_the_line(page, live_server, checking):
    page.goto(f"{live_server.url}/datasets/{checking['broken']}/")
    page.evaluate("window.sameDocument = true")
    consumer_writes(live_server, checking["broken"], state="refused", refusal_field="file",
                    refusal="broken.jsonl: line 41: not valid JSON")
    page.wait_for_selector("#dataset-refused")
    assert page.inner_text("#dataset-refusal") == "broken.jsonl: line 41: not valid JSON"
    assert page.evaluate("window.sameDocument") is True
