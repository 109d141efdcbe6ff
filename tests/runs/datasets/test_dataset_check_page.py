"""A large upload posted to the page opens its dataset while its rows are checked: the page shows the
check's progress and loads the script that follows it; a refused dataset's page says why and what
to do; the list says which datasets are being checked or were refused."""
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from runs.datasets.models import Dataset
from runs.datasets.models import CheckState


@pytest.fixture(autouse=True)
def media_root(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.FILE_UPLOAD_TEMP_DIR = str(tmp_path)


def large_jsonl() -> bytes:
    return "".join(json.dumps({"question": f"What is {n} + {n}? " + "x" * 60}) + "\n" for n in range(60_000)).encode()


def test_a_large_upload_opens_its_page_showing_the_check_in_progress(logged_in, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks() as sent:
        response = logged_in.post("/datasets/new/", {"source": "upload", "name": "big", "prompt_column": "question",
                                                     "file": SimpleUploadedFile("big.jsonl", large_jsonl())},
                                  follow=True)
    assert response.status_code == 200 and len(sent) == 1
    page = response.content.decode()
    assert "its rows are being checked" in page and 'id="dataset-check"' in page and "0 rows checked" in page
    assert "js/dataset_check.js" in page
    assert Dataset.objects.get(name="big").state == CheckState.CHECKING


def test_a_refused_dataset_says_why_and_what_to_do(logged_in, dataset):
    Dataset.objects.filter(pk=dataset.pk).update(state=CheckState.REFUSED, refusal_field="file",
                                                 refusal="big.jsonl: line 7: not valid JSON")
    page = logged_in.get(f"/datasets/{dataset.pk}/").content.decode()
    assert "big.jsonl: line 7: not valid JSON" in page and "upload a corrected file" in page
    assert "dataset_check.js" not in page


def test_the_list_says_which_datasets_are_being_checked_or_refused(logged_in, owner, dataset):
    Dataset.objects.create(owner=owner, name="big", source="upload", state=CheckState.CHECKING)
    Dataset.objects.create(owner=owner, name="bad", source="upload", state=CheckState.REFUSED, refusal="line 2: x")
    page = logged_in.get("/datasets/").content.decode()
    assert "being checked" in page and 'title="line 2: x">refused' in page
