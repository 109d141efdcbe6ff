"""A judge's API key reaches only the worker of a run that names it: fetched with the run's own
token while the run is active, never through a user's session, never in the stored launch spec."""
import json

import pytest
from django.utils import timezone

from runs.training_runs.launch import build_launch_spec, without_secrets
from runs.training_runs.models import IllegalTransition, Run, RunEvalReward, RunReward
from runs.rewards.models.function import RewardFunction
from runs.rewards.secrets import seal_api_key

KEY, EVAL_KEY = "sk-judge-key-0123456789abcdef", "sk-eval-judge-key-9876543210"
JUDGE = {"template": "Rate {completion} for {prompt}.", "endpoint": "url", "base_url": "https://api.example.org/v1",
         "model": "gpt-4o-mini"}


def url_judge(owner, name, key=None) -> RewardFunction:
    return RewardFunction.objects.create(owner=owner, name=name, kind="judge", params=JUDGE,
                                         api_key_sealed=seal_api_key(key) if key else "")


def judged_run(owner, dataset, config, *rewards, eval_rewards=(), name="judged") -> Run:
    run = Run.objects.create(owner=owner, name=name, dataset=dataset, config=dict(config.values), attempt=1)
    for reward in rewards:
        RunReward.objects.create(run=run, reward_function=reward)
    for reward in eval_rewards:
        RunEvalReward.objects.create(run=run, reward_function=reward)
    run.enqueue()
    run.test_token = run.issue_ingest_token()
    run.save()
    return run


@pytest.fixture
def run_with_judges(owner, dataset, config, reward):
    return judged_run(owner, dataset, config, reward, url_judge(owner, "strict", KEY), url_judge(owner, "keyless"),
                      eval_rewards=[url_judge(owner, "eval-judge", EVAL_KEY)])


def fetch(client, run, token=None):
    headers = {"HTTP_AUTHORIZATION": f"Bearer {token}"} if token else {}
    return client.get(f"/api/runs/{run.pk}/secrets/", **headers)


def test_the_runs_token_gets_the_keys_of_its_judges_while_it_runs(anon_api, run_with_judges):
    for status in ("queued", "running"):
        Run.objects.filter(pk=run_with_judges.pk).update(status=status)
        response = fetch(anon_api, run_with_judges, run_with_judges.test_token)
        assert response.status_code == 200, response.content
        assert response.json() == {"api_keys": {"strict": KEY, "eval-judge": EVAL_KEY}}
        assert response["Cache-Control"] == "no-store"


def test_another_runs_token_reads_as_no_such_run(anon_api, owner, dataset, config, run_with_judges, reward):
    other = judged_run(owner, dataset, config, reward, name="other")
    response = fetch(anon_api, run_with_judges, other.test_token)
    assert response.status_code == 404 and KEY not in response.content.decode()


def test_a_users_session_or_api_token_opens_nothing(owner_api, client, owner, run_with_judges):
    assert fetch(owner_api, run_with_judges).status_code == 401
    client.force_login(owner)
    response = fetch(client, run_with_judges)
    assert response.status_code == 401 and "Bearer" in response.json()["detail"]


@pytest.mark.parametrize("status", ["created", "succeeded", "failed", "cancelled"])
def test_a_run_that_is_not_active_is_refused(anon_api, run_with_judges, status):
    Run.objects.filter(pk=run_with_judges.pk).update(status=status, finished_at=timezone.now())
    response = fetch(anon_api, run_with_judges, run_with_judges.test_token)
    assert response.status_code == 403 and status in response.json()["detail"]
    assert KEY not in response.content.decode()


def test_a_run_that_ended_long_ago_has_no_valid_token(anon_api, run_with_judges, settings):
    settings.RUN_TOKEN_GRACE_S = 0
    Run.objects.filter(pk=run_with_judges.pk).update(status="succeeded",
                                                     finished_at=timezone.now() - timezone.timedelta(seconds=5))
    assert fetch(anon_api, run_with_judges, run_with_judges.test_token).status_code == 401


def test_a_key_sealed_under_another_secret_key_says_to_set_it_again(anon_api, run_with_judges, settings):
    settings.SECRET_KEY = "rotated-" + settings.SECRET_KEY
    response = fetch(anon_api, run_with_judges, run_with_judges.test_token)
    assert response.status_code == 409 and "set the reward's API key again" in response.json()["detail"]


def test_the_launch_spec_points_at_the_keys_and_never_holds_them(run_with_judges, settings):
    settings.PUBLIC_URL = "http://controlplane.example.org:8000"
    spec = build_launch_spec(run_with_judges, run_with_judges.test_token)
    assert spec["secrets_url"] == f"http://controlplane.example.org:8000/api/runs/{run_with_judges.pk}/secrets/"
    assert {r["name"]: r["has_api_key"] for r in spec["rewards"]} == {"acc": False, "strict": True, "keyless": False}
    sent, stored = json.dumps(spec), json.dumps(without_secrets(spec))
    assert KEY not in sent and EVAL_KEY not in sent
    assert KEY not in stored and EVAL_KEY not in stored and run_with_judges.test_token not in stored


def test_a_run_without_keys_has_no_secrets_url(owner, dataset, config, reward):
    run = judged_run(owner, dataset, config, reward, url_judge(owner, "keyless"))
    assert build_launch_spec(run, run.test_token)["secrets_url"] is None


def test_a_served_judge_naming_a_path_cannot_start(owner, dataset, config):
    pathed = RewardFunction.objects.create(owner=owner, name="pathed", kind="judge",
                                           params={"template": "Rate {completion}.", "model": "/etc"})
    run = judged_run(owner, dataset, config, pathed)
    with pytest.raises(IllegalTransition, match="reward 'pathed'.*hub id"):
        build_launch_spec(run, run.test_token)


def test_two_judges_of_one_name_cannot_start_as_one_would_get_the_others_key(owner, other_user, dataset, config):
    """Keys are fetched by reward name: a run (stored before the rule, or changed in the admin) holding
    two judges named alike would send one's key to the other's endpoint."""
    mine, theirs = url_judge(owner, "judge", KEY), url_judge(other_user, "judge", EVAL_KEY)
    run = judged_run(owner, dataset, config, mine, eval_rewards=[theirs])
    with pytest.raises(IllegalTransition, match=rf"share a name: 'judge' \(ids {mine.pk}, {theirs.pk}\)"):
        build_launch_spec(run, run.test_token)
