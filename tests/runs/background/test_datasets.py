"""On a live server with a real consumer, a large upload answers at once in `checking` and becomes
`ready` with its rows counted, a bad one `refused` naming its line; a run on a dataset still being
checked is refused with that message."""
import json

from tests.support.background_work import owner_client, polled

ROWS = 60_000  # about 5 MB: spooled to disk, so checked by the consumer


def large_jsonl(bad_line: int | None = None) -> bytes:
    lines = [json.dumps({"prompt": f"What is {n} + {n}? Answer with the number only.", "answer": str(2 * n)})
             for n in range(ROWS)]
    if bad_line is not None:
        lines[bad_line - 1] = '{"prompt": "unfinished'
    return ("\n".join(lines) + "\n").encode()


def upload(client, name: str, content: bytes):
    return client.post("/api/datasets/", data={"name": name, "source": "upload"},
                       files={"file": (f"{name}.jsonl", content, "application/octet-stream")})


def checked(client, dataset_id: int) -> dict:
    url = f"/api/datasets/{dataset_id}/"
    return polled(client, url, lambda answer: answer["state"] != "checking")[-1]


def test_a_large_upload_answers_checking_then_becomes_ready(live):
    client = owner_client(live)
    response = upload(client, "big", large_jsonl())
    assert response.status_code == 201, response.text
    assert response.json()["state"] == "checking" and response.json()["row_count"] is None
    ready = checked(client, response.json()["id"])
    assert (ready["state"], ready["row_count"], ready["columns"]) == ("ready", ROWS, ["prompt", "answer"])


def test_a_large_upload_with_a_bad_line_becomes_refused_naming_it(live):
    client = owner_client(live)
    response = upload(client, "broken", large_jsonl(bad_line=54_321))
    assert response.status_code == 201, response.text
    refused = checked(client, response.json()["id"])
    assert refused["state"] == "refused" and refused["refusal_field"] == "file"
    assert refused["refusal"].startswith("broken.jsonl: line 54321: not valid JSON")


def test_a_run_on_a_dataset_still_being_checked_is_refused_with_its_message(live):
    client = owner_client(live)
    response = client.post("/api/runs/", json={"name": "too soon", "dataset": live.seed["checking"],
                                               "rewards": [{"reward_function": live.seed["reward"]}]})
    assert response.status_code == 400
    assert response.json()["dataset"] == ["dataset 'still checking' is still being checked (1000 rows so far); "
                                          "use it once its page says it is ready"]
