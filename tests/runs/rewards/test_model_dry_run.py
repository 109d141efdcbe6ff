"""A judge's or a reward model's dry run through the API: 202 with where to follow it, scored by the
consumer's task (run here in the test's thread as a consumer runs it) against a stub OpenAI-compatible
endpoint behind an API key; its status shows each raw answer beside the number parsed from it."""
import json
from unittest import mock

import pytest

from runs.background.names import USER_QUEUE
from runs.rewards.models.dry_run import RewardDryRun
from runs.rewards.models.function import RewardFunction
from runs.rewards import model_dry_run
from runs.rewards.secrets import seal_api_key
from tests.support.stub_judge import ANSWERS, KEY, StubJudge, stub_judge

TEMPLATE = "Question: {prompt}\nExpected: {answer}\nAnswer: {completion}\nScore 0-10:"


@pytest.fixture
def endpoint():
    with stub_judge() as base_url:
        yield base_url


@pytest.fixture
def consumed_at_once(django_capture_on_commit_callbacks):
    """Asks a dry run; the queued one is scored in the test's thread when the request's transaction
    commits, by the registered task with the message's arguments after a JSON trip, as a consumer would."""
    from controlplane.celery import app
    import runs.rewards.tasks  # noqa: F401  registers the task, as a consumer's start does

    def consume(name, args, queue):
        assert queue == USER_QUEUE
        app.tasks[name](*json.loads(json.dumps(args)))

    def ask_and_score(client, reward, **body):
        with django_capture_on_commit_callbacks(execute=True):
            return ask(client, reward, **body)

    with mock.patch.object(app, "send_task", side_effect=consume):
        yield ask_and_score


def url_judge(owner, base_url: str, key: str | None = KEY, **params) -> RewardFunction:
    return RewardFunction.objects.create(
        owner=owner, name="rubric", kind="judge", api_key_sealed=seal_api_key(key) if key else "",
        params={"template": TEMPLATE, "endpoint": "url", "base_url": base_url, "model": "stub-judge", **params})


def ask(client, reward, **body):
    return client.post(f"/api/reward-functions/{reward.pk}/dry-run/", body, format="json")


def test_an_endpoint_judges_dry_run_is_queued_and_shows_each_raw_answer_beside_its_number(
        owner_api, owner, dataset, endpoint, consumed_at_once):
    reward = url_judge(owner, endpoint)
    asked = consumed_at_once(owner_api, reward, dataset=dataset.pk, completions=[["good", "bad"], "vague"])
    assert asked.status_code == 202, asked.content
    assert asked.json()["state"] == "queued" and asked["Location"] == asked.json()["url"]
    status = owner_api.get(asked.json()["url"]).json()
    assert status["state"] == "done", status["error"]
    assert status["rows_done"] == status["rows_total"] == 2 and status["progress"] == "done"
    first, second = status["result"]["rows"]
    assert first["scores"] == [0.8, 0.2] and [a["raw"] for a in first["answers"]] == ['{"score": 8}', '{"score": 2}']
    assert first["columns"] == {"answer": "#### 6"} and first["answers"][0]["error"] is None
    [vague] = second["answers"]
    assert second["scores"] == [None] and vague["raw"] == ANSWERS["vague"] and "unreadable answer" in vague["error"]
    assert status["result"]["summary"]["errors"] == 1
    # The template was filled in with the row's column, and the stored key reached the endpoint.
    assert any("Expected: #### 6" in body["messages"][-1]["content"] for body in StubJudge.seen)


def test_an_endpoint_that_refuses_the_key_fails_the_dry_run_with_its_message(
        owner_api, owner, dataset, endpoint, consumed_at_once):
    reward = url_judge(owner, endpoint, key="sk-wrong-key-0000000000")
    asked = consumed_at_once(owner_api, reward, dataset=dataset.pk, completions=["good"])
    status = owner_api.get(asked.json()["url"]).json()
    assert status["state"] == "failed" and status["result"] is None
    assert "refused the API key" in status["error"] and "Incorrect API key provided" in status["error"]
    assert "sk-wrong-key" not in status["error"] and not StubJudge.seen


def test_a_rank_judge_orders_a_runs_whole_group_at_once(owner_api, owner, dataset, endpoint, consumed_at_once):
    reward = url_judge(owner, endpoint, mode="rank", template="Rank best first:\n{completions}")
    asked = consumed_at_once(owner_api, reward, dataset=dataset.pk, completions=[["a", "b", "c"]])
    status = owner_api.get(asked.json()["url"]).json()
    assert status["state"] == "done", status["error"]
    ranked = [body for body in StubJudge.seen if body["messages"][-1]["content"].startswith("Rank")]
    assert len(ranked) == 1 and "1. a\n2. b\n3. c" in ranked[0]["messages"][-1]["content"]
    [row] = status["result"]["rows"]
    assert row["scores"] == [0.5, 1.0, 0.0]  # b first, a second, c last
    assert all(a["raw"] == '{"ranking": [2, 1, 3]}' and a["error"] is None for a in row["answers"])


def test_only_the_user_who_asked_sees_a_dry_run(owner_api, other_api, owner, dataset, endpoint, consumed_at_once):
    reward = url_judge(owner, endpoint)
    asked = consumed_at_once(owner_api, reward, dataset=dataset.pk, completions=["good"])
    assert owner_api.get(asked.json()["url"]).status_code == 200
    assert other_api.get(asked.json()["url"]).status_code == 404


def test_a_built_in_still_answers_at_once(owner_api, reward, dataset, broker):
    response = ask(owner_api, reward, dataset=dataset.pk, completions=["#### 6"])
    assert response.status_code == 200 and response.json()["rows"][0]["scores"] == [1.0]
    assert not RewardDryRun.objects.exists() and not broker.called


def test_a_served_judge_is_refused_where_vllm_is_not_installed(owner_api, owner, dataset, broker, monkeypatch):
    monkeypatch.setattr(model_dry_run, "installed", lambda name: name != "vllm")
    reward = RewardFunction.objects.create(owner=owner, name="served", kind="judge",
                                           params={"template": TEMPLATE, "model": "smollm2-135m-instruct"})
    response = ask(owner_api, reward, dataset=dataset.pk, completions=["good"])
    assert response.status_code == 400 and "vLLM is not installed" in response.json()["detail"]
    assert not RewardDryRun.objects.exists() and not broker.called


def test_a_reward_model_not_prepared_here_is_refused_naming_it(owner_api, owner, dataset, broker, monkeypatch):
    monkeypatch.setattr(model_dry_run, "installed", lambda name: True)
    reward = RewardFunction.objects.create(owner=owner, name="rm", kind="reward_model", params={"model": "org/rm-x"})
    response = ask(owner_api, reward, dataset=dataset.pk, completions=["good"])
    assert response.status_code == 400 and "'org/rm-x' is not prepared on this machine" in response.json()["detail"]


def test_a_runs_samples_are_judged_with_their_rows_columns_and_a_missing_column_is_that_answers_error(
        owner_api, owner, run, endpoint, consumed_at_once):
    from runs.telemetry.models import Sample

    templated = "<|im_start|>user\nWhat is 5 - 7? Think briefly, then give the final answer as #### <number>.<|im_end|>"
    for group, prompt, completions in [(0, templated, ["good", "bad"]), (1, "unknown", ["good"])]:
        for text in completions:
            Sample.objects.create(run=run, step=3, group=group, prompt=prompt, completion=text)
    reward = url_judge(owner, endpoint)
    asked = consumed_at_once(owner_api, reward, run=run.pk, step=3)
    assert asked.status_code == 202, asked.content
    status = owner_api.get(asked.json()["url"]).json()
    assert status["state"] == "done", status["error"]
    first, second = status["result"]["rows"]
    assert first["scores"] == [0.8, 0.2] and first["columns"] == {"answer": "#### -2"}
    assert second["scores"] == [None] and "no dataset row" in second["note"]
    assert second["answers"][0]["raw"] is None and "answer" in second["answers"][0]["error"]


def test_a_second_model_dry_run_waits_for_the_first_one_of_the_same_user(owner_api, owner, dataset, endpoint):
    """A served judge's dry run starts a model on the control plane's machine: one at a time a user
    by default (BACKGROUND_UNFINISHED_PER_ACCOUNT_REWARD_DRY_RUNS)."""
    first = ask(owner_api, url_judge(owner, endpoint), dataset=dataset.pk, completions=["good"])
    assert first.status_code == 202
    reward = RewardFunction.objects.create(owner=owner, name="other", kind="judge", params={
        "template": TEMPLATE, "endpoint": "url", "base_url": endpoint, "model": "stub-judge"})
    refused = ask(owner_api, reward, dataset=dataset.pk, completions=["good"])
    assert refused.status_code == 429
    assert refused.json() == {"detail": refused.json()["detail"], "limit": 1, "unfinished": 1,
                              "setting": "BACKGROUND_UNFINISHED_PER_ACCOUNT_REWARD_DRY_RUNS"}
    assert RewardDryRun.objects.count() == 1
    RewardDryRun.objects.get(pk=first.json()["id"]).finish({})
    assert ask(owner_api, reward, dataset=dataset.pk, completions=["good"]).status_code == 202


def test_a_dry_run_lost_for_half_an_hour_no_longer_holds_the_users_turn(owner_api, owner, dataset, endpoint):
    """A consumer that died mid-run leaves its row unfinished: past LOST_AFTER it is failed as lost."""
    from datetime import timedelta

    from django.utils import timezone

    first = ask(owner_api, url_judge(owner, endpoint), dataset=dataset.pk, completions=["good"])
    RewardDryRun.objects.filter(pk=first.json()["id"]).update(updated_at=timezone.now() - timedelta(minutes=31))
    reward = RewardFunction.objects.create(owner=owner, name="other", kind="judge", params={
        "template": TEMPLATE, "endpoint": "url", "base_url": endpoint, "model": "stub-judge"})
    assert ask(owner_api, reward, dataset=dataset.pk, completions=["good"]).status_code == 202
    lost = RewardDryRun.objects.get(pk=first.json()["id"])
    assert lost.state == RewardDryRun.FAILED and lost.error.startswith("lost:")
