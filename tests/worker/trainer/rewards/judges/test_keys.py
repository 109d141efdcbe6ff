"""A run's judges' API keys: fetched from the control plane with the run's token, waited for
while it is away, and a key missing (or refused) fails the run at start naming the reward,
never showing a key."""

import httpx
import pytest

from tests.support.secrets_view import SecretsView
from tests.support.trainers import logged_lines
from worker.trainer.app import Trainer
from worker.trainer.config import TrainingConfig
from worker.trainer.reporting.fetching import Patience
from worker.trainer.rewards.judges.keys import ApiKeysError, fetch_api_keys, needs_api_keys
from worker.trainer.spec import LaunchSpec, RewardSpec

JUDGE = {"template": "Is {completion} right?", "mode": "choice", "labels": {"yes": 1, "no": 0},
         "endpoint": "url", "base_url": "https://judges.example/v1", "model": "gpt-judge"}
URL = "http://control-plane.test/api/runs/7/secrets/"


def judge(name, has_api_key=True):
    return RewardSpec(name=name, kind="judge", params=JUDGE, has_api_key=has_api_key)


def no_wait() -> Patience:
    return Patience(window_s=60, sleep=lambda seconds: None)


def answering(*replies):
    """A control plane answering each GET with the next (status, body); the requests it saw."""
    seen, queue = [], list(replies)

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        status, body = queue.pop(0)
        if isinstance(body, Exception):
            raise body
        return httpx.Response(status, json=body)
    return httpx.MockTransport(handle), seen


def test_keys_are_fetched_with_the_runs_token_for_the_rewards_that_have_one():
    transport, seen = answering((200, {"api_keys": {"style": "sk-1", "facts": "sk-2", "gone": "sk-3"}}))
    keys = fetch_api_keys([judge("style"), judge("plain", has_api_key=False), judge("facts")], URL, "run-token",
                          patience=no_wait(), transport=transport)
    assert keys == {"style": "sk-1", "facts": "sk-2"}
    [request] = seen
    assert str(request.url) == URL and request.headers["Authorization"] == "Bearer run-token"


def test_without_a_reward_that_has_a_key_nothing_is_fetched():
    transport, seen = answering()
    assert fetch_api_keys([judge("plain", has_api_key=False)], None, "run-token", transport=transport) == {}
    assert seen == []


def test_a_key_missing_is_refused_naming_the_reward_and_no_key():
    transport, _ = answering((200, {"api_keys": {"style": "sk-present-secret"}}))
    with pytest.raises(ApiKeysError, match="no API key for reward\\(s\\) 'facts'") as refused:
        fetch_api_keys([judge("style"), judge("facts")], URL, "run-token", patience=no_wait(), transport=transport)
    assert "sk-present-secret" not in str(refused.value)


def test_a_reward_with_a_key_and_no_url_to_fetch_it_from_is_refused():
    with pytest.raises(ApiKeysError, match="'style' need an API key.*no secrets_url"):
        fetch_api_keys([judge("style")], None, "run-token")


def test_a_control_plane_away_or_busy_is_waited_for_then_answers():
    waits = []
    transport, seen = answering((0, httpx.ConnectError("refused")), (503, {"detail": "restarting"}),
                                (200, {"api_keys": {"style": "sk-1"}}))
    keys = fetch_api_keys([judge("style")], URL, "run-token", patience=no_wait(), on_wait=waits.append,
                          transport=transport)
    assert keys == {"style": "sk-1"} and len(seen) == 3
    assert "did not answer" in waits[0] and "HTTP 503" in waits[1] and "restarting" in waits[1]


@pytest.mark.parametrize(("status", "body", "message"), [
    (403, {"detail": "this token is not this run's"}, "refused the judges' API keys \\(HTTP 403\\): this token"),
    (200, {"keys": {}}, "holds no api_keys object"),
    (200, {"api_keys": ["sk-1"]}, "api_keys is list"),
])
def test_a_refusal_or_a_wrong_answer_fails_at_once_saying_so(status, body, message):
    transport, seen = answering((status, body), (200, {"api_keys": {"style": "sk-1"}}))
    with pytest.raises(ApiKeysError, match=message):
        fetch_api_keys([judge("style")], URL, "run-token", patience=no_wait(), transport=transport)
    assert len(seen) == 1


def test_each_reward_is_named_once():
    assert needs_api_keys([judge("style"), judge("style"), judge("plain", has_api_key=False)]) == ["style"]


@pytest.fixture
def control_plane():
    """A local control plane whose secrets view gives a key to `style` only."""
    with SecretsView({"style": "sk-never-shown"}) as view:
        yield view.url, view.seen


def test_a_run_whose_judge_has_no_key_fails_at_start_naming_it(tmp_path, control_plane):
    url, seen = control_plane
    trainer = Trainer(LaunchSpec.model_validate({
        "run_id": 1, "model": "no-such-model", "output_dir": str(tmp_path / "out"),
        "dataset": {"kind": "generator", "generator": "arithmetic", "params": {"count": 8}},
        "rewards": [judge("style").model_dump(), judge("facts").model_dump()],
        "config": TrainingConfig(max_steps=1).model_dump(), "secrets_url": url,
    }))
    assert trainer.run() == "failed"
    lines = logged_lines(tmp_path)
    assert any("no API key for reward(s) 'facts'" in line for line in lines)
    assert not any("sk-never-shown" in line for line in lines)
    assert seen == [None]  # no ingest here: no token to send
