"""Dataset pages through the Django client: list, the three ways to create one (with errors
next to the field), the detail's preview with the prompt column marked, delete and access."""
import html as html_lib
import io
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from runs.datasets.models import Dataset
from runs.datasets.pages import cell_text

ROWS = [{"question": f"What is {i} + {i}?", "answer": f"#### {2 * i}"} for i in range(8)]


@pytest.fixture(autouse=True)
def media_root(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


def jsonl(rows) -> bytes:
    return "".join(json.dumps(row) + "\n" for row in rows).encode()


def parquet(rows) -> bytes:
    buffer = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows), buffer)
    return buffer.getvalue()


def post_upload(client, filename: str, content: bytes, **fields):
    data = {"source": "upload", "name": "mine", "prompt_column": "question",
            "file": SimpleUploadedFile(filename, content), **fields}
    return client.post("/datasets/new/", data)


def error_of(html: str, element_id: str) -> str:
    return html_lib.unescape(html.split(f'id="{element_id}"')[1].split("</p>")[0])


def test_an_empty_list_says_what_to_do(logged_in):
    assert "No datasets yet — upload one or use a generator" in logged_in.get("/datasets/").content.decode()


def test_the_list_shows_the_users_datasets_with_their_shape(logged_in, dataset, other_user, library_for):
    theirs = library_for(other_user, "theirs")["dataset"]
    html = logged_in.get("/datasets/").content.decode()
    assert dataset.name in html and theirs.name not in html
    assert "prompt, answer" in html and "<code>arithmetic</code>" in html


def test_the_new_page_offers_upload_hub_and_generator_with_a_drop_zone(logged_in):
    html = logged_in.get("/datasets/new/").content.decode()
    assert 'id="dropzone"' in html and 'type="file"' in html and 'id="upload-progress"' in html
    assert 'data-api="/api/datasets/"' in html
    assert 'id="hub-hub_id"' in html
    assert 'id="id_gen-arithmetic-difficulty"' in html and "Default: <code>2000</code>" in html


def csv_bytes(rows) -> bytes:
    return ("question,answer\n" + "".join(f"{r['question']},{r['answer']}\n" for r in rows)).encode()


@pytest.mark.parametrize("filename,content", [
    ("rows.jsonl", jsonl(ROWS)), ("rows.csv", csv_bytes(ROWS)), ("rows.parquet", parquet(ROWS)),
])
def test_an_upload_posted_to_the_page_is_stored_and_opens_its_page(logged_in, owner, filename, content):
    response = post_upload(logged_in, filename, content)
    dataset = Dataset.objects.get(owner=owner, name="mine")
    assert response.status_code == 302 and response.url == f"/datasets/{dataset.pk}/"
    assert dataset.row_count == len(ROWS) and dataset.columns == ["question", "answer"]


def test_a_missing_prompt_column_is_shown_next_to_that_field(logged_in):
    response = post_upload(logged_in, "rows.jsonl", jsonl(ROWS), prompt_column="prompt")
    assert response.status_code == 400
    error = error_of(response.content.decode(), "upload-prompt_column-error")
    assert "no column 'prompt'" in error and "question, answer" in error
    assert not Dataset.objects.exists()


def test_a_broken_file_is_shown_next_to_the_file_field(logged_in):
    response = post_upload(logged_in, "rows.jsonl", jsonl(ROWS) + b"{not json\n")
    error = error_of(response.content.decode(), "upload-file-error")
    assert "line 9" in error and "not valid JSON" in error


def test_an_upload_without_a_file_says_to_attach_one(logged_in):
    response = logged_in.post("/datasets/new/", {"source": "upload", "name": "x"})
    assert response.status_code == 400
    assert "attach a JSONL, CSV or Parquet file" in error_of(response.content.decode(), "upload-file-error")


def test_an_upload_over_the_limit_is_refused_on_the_file(logged_in, settings):
    settings.DATASET_UPLOAD_MAX_BYTES = 64
    response = post_upload(logged_in, "rows.jsonl", jsonl(ROWS))
    assert response.status_code == 400
    assert "the limit is" in error_of(response.content.decode(), "upload-file-error")
    assert not Dataset.objects.exists()


def test_a_taken_name_is_refused_on_name(logged_in, dataset):
    response = post_upload(logged_in, "rows.jsonl", jsonl(ROWS), name=dataset.name)
    assert "already have" in error_of(response.content.decode(), "upload-name-error")


def test_a_hub_dataset_is_stored_unchecked(logged_in, owner):
    response = logged_in.post("/datasets/new/", {"source": "hub", "name": "gsm", "hub_id": "openai/gsm8k",
                                                 "split": "test", "prompt_column": "question"})
    dataset = Dataset.objects.get(owner=owner)
    assert response.status_code == 302
    assert (dataset.hub_id, dataset.split, dataset.row_count) == ("openai/gsm8k", "test", None)
    assert "checked by the worker" in logged_in.get(response.url).content.decode()


def test_a_malformed_hub_id_is_shown_next_to_it(logged_in):
    response = logged_in.post("/datasets/new/", {"source": "hub", "name": "x", "hub_id": "../etc"})
    assert response.status_code == 400
    html = response.content.decode()
    assert "is not a hub id: give one such as" in error_of(html, "hub-hub_id-error")
    assert 'value="../etc"' in html


def test_a_generator_dataset_takes_its_parameters(logged_in, owner):
    response = logged_in.post("/datasets/new/", {"source": "generator", "name": "sums", "generator": "arithmetic",
                                                 "gen-arithmetic-count": "30", "gen-arithmetic-difficulty": "2",
                                                 "gen-arithmetic-seed": "1", "gen-arithmetic-examples": "1"})
    dataset = Dataset.objects.get(owner=owner)
    assert response.status_code == 302
    assert dataset.generator_params == {"count": 30, "difficulty": 2, "seed": 1, "examples": 1}
    assert dataset.row_count == 30 and dataset.prompt_format == "chat"


def test_a_bad_generator_parameter_is_shown_next_to_that_parameter(logged_in):
    response = logged_in.post("/datasets/new/", {"source": "generator", "name": "sums", "generator": "arithmetic",
                                                 "gen-arithmetic-count": "10", "gen-arithmetic-difficulty": "9"})
    assert response.status_code == 400
    html = response.content.decode()
    assert "less than or equal to 5" in error_of(html, "id_gen-arithmetic-difficulty-error")
    assert 'value="9"' in html.split('id="id_gen-arithmetic-difficulty"')[1].split(">")[0]
    assert not Dataset.objects.exists()


def test_an_unknown_generator_names_the_choices(logged_in):
    response = logged_in.post("/datasets/new/", {"source": "generator", "name": "x", "generator": "sudoku"})
    assert "arithmetic" in error_of(response.content.decode(), "generator-generator-error")


def test_an_unknown_source_is_a_clear_400(logged_in):
    response = logged_in.post("/datasets/new/", {"source": "ftp", "name": "x"})
    assert response.status_code == 400
    assert "unknown source 'ftp'" in error_of(response.content.decode(), "upload-source-error")


def test_the_detail_previews_rows_with_the_prompt_column_marked(logged_in, owner):
    post_upload(logged_in, "rows.jsonl", jsonl(ROWS))
    dataset = Dataset.objects.get(owner=owner)
    html = logged_in.get(f"/datasets/{dataset.pk}/").content.decode()
    table = html.split('id="preview-table"')[1].split("</table>")[0]
    assert table.count('<th scope="col" class="prompt-col">question') == 1
    assert table.count('<td class="prompt-col">') == 5 and "What is 0 + 0?" in table
    assert f'id="row-count">{len(ROWS)}<' in html


def test_cells_show_text_chat_and_json_readably():
    assert cell_text("plain") == "plain"
    assert cell_text([{"role": "user", "content": "hi"}]) == "user: hi"
    assert cell_text({"a": 1}) == '{"a": 1}' and cell_text(None) == "null"


def test_the_detail_escapes_file_content(logged_in, owner):
    post_upload(logged_in, "rows.jsonl", jsonl([{"question": "<script>alert(1)</script>"}]))
    html = logged_in.get(f"/datasets/{Dataset.objects.get().pk}/").content.decode()
    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;" in html


def test_delete_asks_first_then_deletes(logged_in, dataset):
    assert "cannot be undone" in logged_in.get(f"/datasets/{dataset.pk}/delete/").content.decode()
    response = logged_in.post(f"/datasets/{dataset.pk}/delete/")
    assert response.status_code == 302 and response.url == "/datasets/" and not Dataset.objects.exists()


def test_a_dataset_used_by_runs_is_not_deleted_and_the_page_says_why(logged_in, run, dataset):
    page = logged_in.get(f"/datasets/{dataset.pk}/delete/").content.decode()
    assert "cannot be deleted" in page and run.name in page and "Delete dataset</button>" not in page
    response = logged_in.post(f"/datasets/{dataset.pk}/delete/")
    assert response.status_code == 409
    assert "Nothing was deleted: 1 run uses this dataset" in response.content.decode()
    assert Dataset.objects.filter(pk=dataset.pk).exists()


@pytest.mark.parametrize("suffix", ["", "delete/"])
def test_another_users_dataset_is_not_found(client, other_user, dataset, suffix):
    client.force_login(other_user)
    assert client.get(f"/datasets/{dataset.pk}/{suffix}").status_code == 404
    assert client.post(f"/datasets/{dataset.pk}/delete/").status_code == 404
    assert Dataset.objects.filter(pk=dataset.pk).exists()


def test_staff_see_everyones_datasets(client, staff_user, dataset):
    client.force_login(staff_user)
    assert client.get(f"/datasets/{dataset.pk}/").status_code == 200
    assert dataset.name in client.get("/datasets/").content.decode()


def test_anonymous_users_are_sent_to_log_in(client, dataset):
    for url in ("/datasets/", "/datasets/new/", f"/datasets/{dataset.pk}/"):
        response = client.get(url)
        assert response.status_code == 302 and response.url.startswith("/login/")
