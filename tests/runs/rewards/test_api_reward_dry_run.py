"""POST /api/reward-functions/<id>/dry-run/: scores per row, time per call, errors with the user's traceback."""
import json
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from runs.datasets.models import Dataset
from runs.rewards.models.function import RewardFunction
from runs.telemetry.models import Sample
from tests.support.reward_authors import grant_reward_authoring

GSM8K = Path(__file__).resolve().parents[4] / "shared" / "datasets" / "gsm8k" / "test.jsonl"
MENTIONS_ANSWER = '''
def reward(prompts, completions, answer, **columns):
    print("scoring", len(completions))
    return [1.0 if a.split("####")[-1].strip() in c else 0.0 for c, a in zip(completions, answer)]
'''
FAILS_ON_EMPTY = '''
def first_word(text):
    return text.split()[0]

def reward(prompts, completions, **columns):
    return [float(len(first_word(c))) for c in completions]
'''


@pytest.fixture
def code_reward(owner):
    grant_reward_authoring(owner)
    return RewardFunction.objects.create(owner=owner, name="mentions", kind="code", source=MENTIONS_ANSWER)


def dry_run(client, reward, **body):
    return client.post(f"/api/reward-functions/{reward.pk}/dry-run/", body, format="json")


def test_typed_completions_are_scored_per_row_with_time_and_output(owner_api, code_reward, dataset):
    # The arithmetic dataset's first rows are 7 - 1 = 6 and 5 - 7 = -2.
    response = dry_run(owner_api, code_reward, dataset=dataset.pk, completions=[["so #### 6", "#### 5"], "#### -2"])
    assert response.status_code == 200, response.content
    body = response.json()
    first, second = body["rows"]
    assert first["scores"] == [1.0, 0.0] and second["scores"] == [1.0]
    assert first["prompt"].startswith("What is 7 - 1?") and first["columns"] == {"answer": "#### 6"}
    assert first["output"] == "scoring 2\n" and first["error"] is None
    assert 0 < first["seconds"] < 30
    assert body["summary"]["calls"] == 2 and body["summary"]["errors"] == 0


def test_an_error_in_one_row_comes_with_the_users_traceback_and_the_others_still_score(owner_api, owner, dataset):
    grant_reward_authoring(owner)
    reward = RewardFunction.objects.create(owner=owner, name="fragile", kind="code", source=FAILS_ON_EMPTY)
    response = dry_run(owner_api, reward, dataset=dataset.pk, completions=["fine words", "   ", "ok"])
    assert response.status_code == 200, response.content
    rows = response.json()["rows"]
    assert rows[0]["scores"] == [4.0] and rows[2]["scores"] == [2.0]
    error = rows[1]["error"]
    assert rows[1]["scores"] is None and error["kind"] == "exception" and error["line"] == 3
    assert "IndexError" in error["message"]
    assert 'File "reward.py", line 6, in reward' in error["traceback"]
    assert "child.py" not in error["traceback"] and "site-packages" not in error["traceback"]
    assert response.json()["summary"]["errors"] == 1


def test_a_builtin_dry_runs_in_process(owner_api, reward, dataset):
    response = dry_run(owner_api, reward, dataset=dataset.pk, completions=["#### 6", "#### 3"])
    assert response.status_code == 200, response.content
    assert [row["scores"] for row in response.json()["rows"]] == [[1.0], [0.0]]


def test_a_builtin_missing_its_column_says_so_per_row(owner_api, owner, dataset):
    exact = RewardFunction.objects.create(owner=owner, name="ex", kind="builtin", builtin="exact_match",
                                          params={"column": "label", "strip": True, "case_sensitive": False})
    row = dry_run(owner_api, exact, dataset=dataset.pk, completions=["6"]).json()["rows"][0]
    assert row["scores"] is None and "no column 'label'" in row["error"]["message"]


def test_a_code_reward_its_owner_may_no_longer_author_still_dry_runs(owner_api, owner, dataset):
    reward = RewardFunction.objects.create(owner=owner, name="old", kind="code", source=MENTIONS_ANSWER)
    response = dry_run(owner_api, reward, dataset=dataset.pk, completions=["#### 6"])
    assert response.status_code == 200 and response.json()["rows"][0]["scores"] == [1.0]


def test_real_gsm8k_rows_uploaded_are_scored_by_accuracy(owner_api, owner):
    lines = GSM8K.read_text().splitlines()[:4]
    upload = owner_api.post("/api/datasets/", {"name": "gsm8k-4", "source": "upload", "prompt_column": "question",
                                               "file": SimpleUploadedFile("gsm8k.jsonl", "\n".join(lines).encode())},
                            format="multipart")
    assert upload.status_code == 201, upload.content
    accuracy = RewardFunction.objects.create(owner=owner, name="acc", kind="builtin", builtin="accuracy",
                                             params={"answer_column": "answer"})
    answers = [json.loads(line)["answer"] for line in lines]
    response = dry_run(owner_api, accuracy, dataset=upload.json()["id"],
                       completions=[[a, a.rsplit("####", 1)[0] + "#### 123456789"] for a in answers])
    assert response.status_code == 200, response.content
    assert [row["scores"] for row in response.json()["rows"]] == [[1.0, 0.0]] * 4


def test_a_runs_samples_at_a_step_are_scored_with_their_dataset_columns(owner_api, code_reward, run):
    templated = "<|im_start|>user\nWhat is 5 - 7? Think briefly, then give the final answer as #### <number>.<|im_end|>"
    for group, prompt, completions in [(0, templated, ["#### -2", "#### 2"]), (1, "unknown prompt", ["x"])]:
        for text in completions:
            Sample.objects.create(run=run, step=4, group=group, prompt=prompt, completion=text)
    response = dry_run(owner_api, code_reward, run=run.pk, step=4)
    assert response.status_code == 200, response.content
    first, second = response.json()["rows"]
    assert first["columns"] == {"answer": "#### -2"} and first["scores"] == [1.0, 0.0]
    assert second["columns"] == {} and "no dataset row" in second["note"]
    assert second["error"]["kind"] == "exception" and "answer" in second["error"]["message"]


def test_a_step_without_samples_names_the_steps_that_have_some(owner_api, code_reward, run):
    Sample.objects.create(run=run, step=2, group=0, prompt="p", completion="c")
    response = dry_run(owner_api, code_reward, run=run.pk, step=3)
    assert response.status_code == 400
    assert "steps with samples: 2" in str(response.json()["step"])


@pytest.mark.parametrize(("body", "field"), [
    ({"completions": ["a"]}, "dataset"),
    ({"dataset": "DATASET"}, "completions"),
    ({"dataset": "DATASET", "completions": []}, "completions"),
    ({"dataset": "DATASET", "completions": [7]}, "completions"),
    ({"dataset": "DATASET", "completions": [["a", 1]]}, "completions"),
    ({"dataset": "DATASET", "completions": ["a", "b"], "rows": 3}, "completions"),
    ({"dataset": "DATASET", "completions": ["a"] * 33}, "completions"),
    ({"dataset": "DATASET", "completions": [["a"] * 17]}, "completions"),
    ({"dataset": "DATASET", "completions": ["x" * 20_001]}, "completions"),
    ({"dataset": "DATASET", "completions": ["a"], "rows": 0}, "rows"),
    ({"dataset": "DATASET", "completions": ["a"], "rows": 33}, "rows"),
    ({"dataset": 999999, "completions": ["a"]}, "dataset"),
    ({"dataset": "nope", "completions": ["a"]}, "dataset"),
    ({"run": "RUN"}, "step"),
    ({"run": "RUN", "step": -1}, "step"),
    ({"run": 999999, "step": 1}, "run"),
    ({"run": "RUN", "step": 1, "completions": ["a"]}, "completions"),
])
def test_bad_requests_are_400_naming_the_field(owner_api, code_reward, dataset, run, body, field):
    body = {key: dataset.pk if value == "DATASET" else run.pk if value == "RUN" else value
            for key, value in body.items()}
    response = dry_run(owner_api, code_reward, **body)
    assert response.status_code == 400, response.content
    assert field in response.json(), response.json()


def test_more_completions_than_the_dataset_has_rows_is_400(owner_api, code_reward, owner):
    small = Dataset.objects.create(owner=owner, name="two", source="generator", generator="arithmetic",
                                   generator_params={"count": 2, "difficulty": 1, "seed": 0})
    response = dry_run(owner_api, code_reward, dataset=small.pk, completions=["a", "b", "c"])
    assert response.status_code == 400 and "only 2 rows" in str(response.json()["completions"])


def test_a_hub_dataset_without_preview_rows_is_400_saying_why(owner_api, code_reward, owner):
    hub = Dataset.objects.create(owner=owner, name="hub", source="hub", hub_id="openai/gsm8k")
    response = dry_run(owner_api, code_reward, dataset=hub.pk, completions=["a"])
    assert response.status_code == 400 and "hub" in str(response.json()["dataset"])


@pytest.mark.parametrize("state", ["checking", "refused"])
def test_a_dataset_not_ready_is_400_saying_why(owner_api, code_reward, owner, state):
    pending = Dataset.objects.create(owner=owner, name="big", source="upload", state=state,
                                     refusal="line 7: not valid JSON")
    response = dry_run(owner_api, code_reward, dataset=pending.pk, completions=["a"])
    assert response.status_code == 400
    said = "still being checked" if state == "checking" else "line 7: not valid JSON"
    assert said in str(response.json()["dataset"])


def test_others_datasets_runs_and_rewards_are_not_reachable(owner_api, other_user, other_api, code_reward, library_for):
    theirs = library_for(other_user, "theirs")
    assert dry_run(owner_api, code_reward, dataset=theirs["dataset"].pk, completions=["a"]).status_code == 400
    assert dry_run(owner_api, code_reward, run=theirs["run"].pk, step=0).status_code == 400
    assert dry_run(other_api, code_reward, dataset=theirs["dataset"].pk, completions=["a"]).status_code == 404


def test_anonymous_dry_runs_are_refused(anon_api, code_reward, dataset):
    assert dry_run(anon_api, code_reward, dataset=dataset.pk, completions=["a"]).status_code in (401, 403)


def test_a_non_object_body_is_400(owner_api, code_reward):
    response = owner_api.post(f"/api/reward-functions/{code_reward.pk}/dry-run/", [1, 2], format="json")
    assert response.status_code == 400


def test_parquet_columns_with_nan_and_dates_are_shown_as_json_and_passed_to_the_reward(owner_api, owner, code_reward):
    import datetime
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table({"prompt": ["2+2?"], "answer": ["#### 4"], "weight": [float("nan")],
                      "day": [datetime.date(2024, 5, 1)]})
    buffer = io.BytesIO()
    pq.write_table(table, buffer)
    upload = owner_api.post("/api/datasets/", {"name": "pq", "source": "upload",
                                               "file": SimpleUploadedFile("d.parquet", buffer.getvalue())},
                            format="multipart")
    assert upload.status_code == 201, upload.content
    response = dry_run(owner_api, code_reward, dataset=upload.json()["id"], completions=["#### 4"])
    assert response.status_code == 200, response.content
    row = response.json()["rows"][0]
    assert row["scores"] == [1.0] and row["columns"] == {"answer": "#### 4", "weight": None, "day": "2024-05-01"}
