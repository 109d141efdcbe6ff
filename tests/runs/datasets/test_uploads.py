"""Uploading a dataset file: what is accepted, and what each broken file is told."""
import io
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from runs.datasets.models import Dataset

GSM8K = Path(__file__).resolve().parents[3].parent / "shared/datasets/gsm8k"
ROWS = [{"prompt": f"What is {i} + {i}?", "answer": f"#### {2 * i}"} for i in range(12)]


@pytest.fixture(autouse=True)
def media_root(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


def jsonl(rows) -> bytes:
    return "".join(json.dumps(row) + "\n" for row in rows).encode()


def csv_bytes(rows) -> bytes:
    header = ",".join(rows[0])
    return (header + "\n" + "".join(",".join(str(v) for v in row.values()) + "\n" for row in rows)).encode()


def parquet(rows) -> bytes:
    buffer = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows), buffer)
    return buffer.getvalue()


def upload(client, filename: str, content: bytes, **fields):
    data = {"name": fields.pop("name", filename), "source": "upload",
            "file": SimpleUploadedFile(filename, content), **fields}
    return client.post("/api/datasets/", data, format="multipart")


def stored_files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file()] if root.exists() else []


@pytest.mark.parametrize("filename,content,fmt", [
    ("rows.jsonl", jsonl(ROWS), "jsonl"),
    ("rows.csv", csv_bytes(ROWS), "csv"),
    ("rows.parquet", parquet(ROWS), "parquet"),
])
def test_a_valid_file_is_stored_with_its_shape(owner_api, media_root, filename, content, fmt):
    response = upload(owner_api, filename, content)
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["row_count"] == len(ROWS)
    assert body["columns"] == ["prompt", "answer"]
    assert body["file_format"] == fmt and body["file_name"] == filename
    assert body["prompt_format"] == "text"
    assert body["preview"][0] == ROWS[0] and 0 < len(body["preview"]) < len(ROWS)
    dataset = Dataset.objects.get(pk=body["id"])
    assert Path(dataset.file.path).read_bytes() == content
    assert Path(dataset.file.path).is_relative_to(media_root)


def test_chat_prompts_are_detected(owner_api):
    rows = [{"messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": f"{i} + 1?"}],
             "answer": str(i + 1)} for i in range(3)]
    response = upload(owner_api, "chat.jsonl", jsonl(rows), prompt_column="messages")
    assert response.status_code == 201, response.content
    assert response.json()["prompt_format"] == "chat"


def test_chat_prompts_in_parquet_are_detected(owner_api):
    rows = [{"prompt": [{"role": "user", "content": "hi"}], "answer": "1"}] * 2
    response = upload(owner_api, "chat.parquet", parquet(rows))
    assert response.status_code == 201, response.content
    assert response.json()["prompt_format"] == "chat"


def test_an_empty_file_is_refused_by_name(owner_api, media_root):
    response = upload(owner_api, "nothing.jsonl", b"")
    assert response.status_code == 400
    message = str(response.json()["file"])
    assert "nothing.jsonl" in message and "empty" in message
    assert not Dataset.objects.exists() and not stored_files(media_root)


def test_a_file_of_blank_lines_has_no_rows(owner_api):
    response = upload(owner_api, "blank.jsonl", b"\n\n  \n")
    assert response.status_code == 400
    assert "no rows" in str(response.json()["file"])


def test_a_missing_prompt_column_lists_the_columns_that_exist(owner_api):
    response = upload(owner_api, "rows.jsonl", jsonl(ROWS), prompt_column="question")
    assert response.status_code == 400
    message = str(response.json()["prompt_column"])
    assert "'question'" in message and "prompt" in message and "answer" in message


def test_a_csv_row_with_the_wrong_field_count_names_its_line(owner_api):
    content = b"prompt,answer\nWhat is 1+1?,2\nWhat is 2+2?,4,extra\n"
    response = upload(owner_api, "broken.csv", content)
    assert response.status_code == 400
    message = str(response.json()["file"])
    assert "broken.csv" in message and "line 3" in message


def test_an_invalid_json_line_is_named(owner_api):
    content = jsonl(ROWS[:2]) + b'{"prompt": "unterminated\n' + jsonl(ROWS[2:3])
    response = upload(owner_api, "broken.jsonl", content)
    assert response.status_code == 400
    assert "line 3" in str(response.json()["file"])


def test_a_json_line_that_is_not_an_object_is_named(owner_api):
    response = upload(owner_api, "list.jsonl", jsonl(ROWS[:1]) + b"[1, 2]\n")
    assert response.status_code == 400
    assert "line 2" in str(response.json()["file"])


def test_an_empty_prompt_names_its_row(owner_api):
    response = upload(owner_api, "rows.jsonl", jsonl([ROWS[0], {"prompt": " ", "answer": "1"}]))
    assert response.status_code == 400
    assert "row 2" in str(response.json())


def test_a_file_that_is_not_utf8_is_refused(owner_api):
    response = upload(owner_api, "latin.csv", "prompt\nwhat is café?\n".encode("latin-1"))
    assert response.status_code == 400
    assert "UTF-8" in str(response.json()["file"])


def test_a_corrupt_parquet_file_is_refused(owner_api):
    response = upload(owner_api, "bad.parquet", b"PAR1 this is not parquet")
    assert response.status_code == 400
    assert "Parquet" in str(response.json()["file"])


def test_an_unknown_extension_is_refused(owner_api):
    response = upload(owner_api, "rows.txt", b"hello\n")
    assert response.status_code == 400
    assert ".jsonl" in str(response.json()["file"])


def test_an_upload_without_a_file_says_to_attach_one(owner_api):
    response = owner_api.post("/api/datasets/", {"name": "x", "source": "upload"}, format="multipart")
    assert response.status_code == 400
    assert "file" in response.json()


@pytest.mark.parametrize("size", [5_000, 300_000], ids=["body-read", "refused-from-content-length"])
def test_an_oversized_file_is_refused_with_413_and_nothing_is_stored(owner_api, settings, media_root, size):
    settings.DATASET_UPLOAD_MAX_BYTES = 1_000
    content = jsonl([{"prompt": "x" * 90}] * (size // 100))
    response = upload(owner_api, "big.jsonl", content)
    assert response.status_code == 413, response.content
    message = response.json()["detail"]
    assert "limit" in message and "1000 bytes" in message.replace(",", "")
    assert not Dataset.objects.exists()
    assert not stored_files(media_root)


@pytest.mark.skipif(not (GSM8K / "test.jsonl").exists(), reason="the shared GSM8K copy is not here")
def test_the_real_gsm8k_test_split_uploads(owner_api):
    content = (GSM8K / "test.jsonl").read_bytes()
    response = upload(owner_api, "gsm8k-test.jsonl", content, prompt_column="question")
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["row_count"] == 1319
    assert body["columns"] == ["question", "answer"]
    assert body["prompt_format"] == "text"
    assert body["preview"][0]["question"].startswith("Janet")


def test_parquet_values_without_a_json_form_are_previewed_as_text(owner_api):
    import datetime

    rows = [{"prompt": "p", "when": datetime.datetime(2024, 1, 2, 3, 4), "score": float("nan"), "blob": b"\x00\x01"}]
    response = upload(owner_api, "typed.parquet", parquet(rows))
    assert response.status_code == 201, response.content
    preview, = response.json()["preview"]
    assert preview["when"].startswith("2024-01-02") and preview["score"] is None
    assert isinstance(preview["blob"], str)


def test_a_later_row_without_the_prompt_column_is_named(owner_api):
    response = upload(owner_api, "rows.jsonl", jsonl([ROWS[0], ROWS[1], {"answer": "1"}]))
    assert response.status_code == 400
    assert "row 3" in str(response.json()["file"]) and "'prompt'" in str(response.json()["file"])


def test_a_malformed_content_length_is_not_a_server_error(owner_api):
    response = owner_api.post("/api/datasets/", {"name": "x", "source": "hub", "hub_id": "a/b"}, format="json",
                              CONTENT_LENGTH="lots")
    assert response.status_code < 500


def test_a_json_array_file_is_told_to_use_json_lines(owner_api):
    response = upload(owner_api, "rows.json", json.dumps(ROWS).encode())
    assert response.status_code == 400
    assert "JSON Lines" in str(response.json()["file"])


def test_deleting_a_dataset_removes_its_uploaded_file(owner_api, media_root, django_capture_on_commit_callbacks):
    created = upload(owner_api, "rows.jsonl", jsonl(ROWS))
    assert created.status_code == 201, created.content
    stored = Path(media_root) / Dataset.objects.get(pk=created.json()["id"]).file.name
    assert stored.exists()
    with django_capture_on_commit_callbacks(execute=True):
        assert owner_api.delete(f"/api/datasets/{created.json()['id']}/").status_code == 204
    assert not stored.exists()
