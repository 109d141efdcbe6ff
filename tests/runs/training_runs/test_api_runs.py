"""Runs over the API: creating, editing until started, and the lifecycle verbs."""
import pytest
from django.utils import timezone

from runs.checkpoints.models.checkpoint import Checkpoint
from runs.rewards.models.function import RewardFunction
from runs.training_runs.models import Run, RunStatus
from tests.support.ingest import post_events
from worker.trainer.config import TrainingConfig as ConfigSchema


@pytest.fixture
def second_reward(owner):
    return RewardFunction.objects.create(owner=owner, name="short", kind="builtin", builtin="length",
                                         params={"min_tokens": 0, "max_tokens": 64, "soft_penalty_tokens": 16})


def run_body(dataset, rewards, **extra):
    return {"name": "trial", "dataset": dataset.pk,
            "rewards": [{"reward_function": r.pk, "weight": w} for r, w in rewards], **extra}


def create(client, body):
    return client.post("/api/runs/", body, format="json")


def test_a_run_gets_a_complete_config_from_template_and_overrides(owner_api, dataset, reward, second_reward, config):
    body = run_body(dataset, [(reward, 1.0), (second_reward, 0.25)], config_template=config.pk,
                    config={"temperature": 0.6})
    response = create(owner_api, body)
    assert response.status_code == 201, response.content
    run = Run.objects.get(pk=response.json()["id"])
    assert run.status == RunStatus.CREATED and run.owner.username == "owner"
    assert run.config == ConfigSchema.model_validate(run.config).model_dump(mode="json")
    assert run.config["temperature"] == 0.6 and run.config["max_steps"] == 5  # override, then template
    stored = [(rr.reward_function_id, rr.weight) for rr in run.run_rewards.all()]
    assert stored == [(reward.pk, 1.0), (second_reward.pk, 0.25)]
    assert response.json()["rewards"][1] == {"reward_function": second_reward.pk, "name": "short", "weight": 0.25}


def test_without_a_template_the_defaults_are_used(owner_api, dataset, reward):
    response = create(owner_api, run_body(dataset, [(reward, 1.0)]))
    assert response.status_code == 201, response.content
    assert response.json()["config"] == ConfigSchema().model_dump(mode="json")


@pytest.mark.parametrize("rewards", [[], None], ids=["empty", "missing"])
def test_a_run_needs_a_reward(owner_api, dataset, rewards):
    body = run_body(dataset, [])
    if rewards is None:
        del body["rewards"]
    response = create(owner_api, body)
    assert response.status_code == 400
    assert "rewards" in response.json()
    assert not Run.objects.exists()


def test_a_reward_listed_twice_is_refused(owner_api, dataset, reward):
    response = create(owner_api, run_body(dataset, [(reward, 1.0), (reward, 0.5)]))
    assert response.status_code == 400
    assert "twice" in str(response.json()["rewards"])


@pytest.fixture
def two_named_acc(staff_user, other_user):
    return [RewardFunction.objects.create(owner=owner, name="acc", kind="builtin", builtin="accuracy")
            for owner in (staff_user, other_user)]


def test_two_reward_functions_of_one_name_are_refused_naming_both(staff_api, two_named_acc, dataset):
    """Staff may use any user's rewards; a run keys its rewards' metrics and API keys by name."""
    mine, theirs = two_named_acc
    response = create(staff_api, run_body(dataset, [(mine, 1.0), (theirs, 0.5)]))
    assert response.status_code == 400, response.content
    assert f"'acc' (ids {mine.pk}, {theirs.pk})" in str(response.json()["rewards"])
    assert not Run.objects.exists()


def test_an_evaluation_reward_named_as_a_training_reward_is_refused_under_eval_rewards(
        staff_api, two_named_acc, dataset):
    mine, theirs = two_named_acc
    response = create(staff_api, run_body(dataset, [(mine, 1.0)], eval_rewards=[
        {"reward_function": theirs.pk, "weight": 1.0}]))
    assert response.status_code == 400, response.content
    assert list(response.json()) == ["eval_rewards"]
    assert f"'acc' (ids {mine.pk}, {theirs.pk})" in str(response.json()["eval_rewards"])
    assert not Run.objects.exists()


def test_a_weight_out_of_range_is_refused(owner_api, dataset, reward):
    response = create(owner_api, run_body(dataset, [(reward, 1e6)]))
    assert response.status_code == 400
    assert "weight" in str(response.json()["rewards"])


def test_an_invalid_config_override_is_reported_under_its_field(owner_api, dataset, reward, config):
    body = run_body(dataset, [(reward, 1.0)], config_template=config.pk, config={"max_staleness": -1, "nonsense": 1})
    response = create(owner_api, body)
    assert response.status_code == 400
    errors = response.json()["config"]
    assert set(errors) == {"max_staleness", "nonsense"}
    assert not Run.objects.exists()


def test_an_unknown_dataset_is_refused(owner_api, reward):
    response = create(owner_api, {"name": "x", "dataset": 999, "rewards": [{"reward_function": reward.pk}]})
    assert response.status_code == 400
    assert "does not exist" in str(response.json()["dataset"])


def test_a_created_run_can_be_edited(owner_api, run, second_reward):
    response = owner_api.patch(f"/api/runs/{run.pk}/", {
        "name": "edited", "config": {"temperature": 0.5},
        "rewards": [{"reward_function": second_reward.pk, "weight": 2.0}],
    }, format="json")
    assert response.status_code == 200, response.content
    run.refresh_from_db()
    assert run.name == "edited" and run.config["temperature"] == 0.5
    assert [(rr.reward_function_id, rr.weight) for rr in run.run_rewards.all()] == [(second_reward.pk, 2.0)]


def test_editing_the_config_keeps_earlier_overrides(owner_api, run):
    owner_api.patch(f"/api/runs/{run.pk}/", {"config": {"temperature": 0.5}}, format="json")
    response = owner_api.patch(f"/api/runs/{run.pk}/", {"config": {"top_p": 0.9}}, format="json")
    assert response.status_code == 200, response.content
    run.refresh_from_db()
    assert (run.config["temperature"], run.config["top_p"], run.config["max_steps"]) == (0.5, 0.9, 5)


def test_choosing_another_template_starts_from_its_values(owner_api, run, config):
    other = type(config).objects.create(owner=config.owner, name="long", values=ConfigSchema(max_steps=77).model_dump())
    owner_api.patch(f"/api/runs/{run.pk}/", {"config": {"temperature": 0.5}}, format="json")
    response = owner_api.patch(f"/api/runs/{run.pk}/", {"config_template": other.pk}, format="json")
    assert response.status_code == 200, response.content
    run.refresh_from_db()
    assert run.config_template == other and run.config["max_steps"] == 77 and run.config["temperature"] == 1.0


def test_an_invalid_edit_changes_nothing(owner_api, run):
    before = dict(run.config)
    response = owner_api.patch(f"/api/runs/{run.pk}/", {"config": {"top_p": 5}}, format="json")
    assert response.status_code == 400 and "top_p" in response.json()["config"]
    run.refresh_from_db()
    assert run.config == before


def test_a_started_run_is_frozen(owner_api, started_run):
    response = owner_api.patch(f"/api/runs/{started_run.pk}/", {"name": "too late"}, format="json")
    assert response.status_code == 400
    assert "frozen" in str(response.json())
    started_run.refresh_from_db()
    assert started_run.name == "r1"


def test_start_queues_the_run_and_sends_the_spec_to_its_worker_pool(owner_api, run, broker,
                                                                      django_capture_on_commit_callbacks):
    run.config = {**run.config, "worker_pool": "gpu-a100"}
    run.save()
    with django_capture_on_commit_callbacks(execute=True):
        response = owner_api.post(f"/api/runs/{run.pk}/start/")
    assert response.status_code == 200, response.content
    assert response.json()["status"] == "queued" and response.json()["attempt"] == 1
    broker.assert_called_once()
    assert broker.call_args.kwargs["queue"] == "gpu-a100"
    run_id, spec = broker.call_args.kwargs["args"]
    assert run_id == run.pk
    assert spec["config"]["worker_pool"] == "gpu-a100" and spec["dataset"]["generator"] == "arithmetic"
    assert [r["name"] for r in spec["rewards"]] == ["acc"]
    run.refresh_from_db()
    assert run.ingest_token_matches(spec["ingest"]["token"])
    assert run.launch_spec["ingest"]["token"] == "***"


def test_nothing_is_sent_when_the_start_is_not_committed(owner_api, run, broker, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        owner_api.post(f"/api/runs/{run.pk}/start/")
    assert callbacks and not broker.called


def test_starting_twice_is_a_conflict(owner_api, run, broker):
    assert owner_api.post(f"/api/runs/{run.pk}/start/").status_code == 200
    response = owner_api.post(f"/api/runs/{run.pk}/start/")
    assert response.status_code == 409
    assert response.json()["status"] == "queued" and "resume" in response.json()["detail"]


def test_cancelling_a_queued_run_cancels_it_at_once(owner_api, started_run):
    response = owner_api.post(f"/api/runs/{started_run.pk}/cancel/")
    assert response.status_code == 200, response.content
    assert response.json()["status"] == "cancelled" and response.json()["finished_at"]


def test_cancelling_a_running_run_asks_the_worker(owner_api, started_run):
    started_run.mark_starting()
    started_run.mark_running()
    started_run.save()
    response = owner_api.post(f"/api/runs/{started_run.pk}/cancel/")
    assert response.status_code == 200
    assert response.json()["status"] == "running" and response.json()["cancel_requested"] is True


def test_cancelling_a_finished_run_is_a_conflict(owner_api, started_run):
    owner_api.post(f"/api/runs/{started_run.pk}/cancel/")
    response = owner_api.post(f"/api/runs/{started_run.pk}/cancel/")
    assert response.status_code == 409 and "nothing to cancel" in response.json()["detail"]


def test_resume_without_a_checkpoint_is_a_conflict(owner_api, started_run):
    owner_api.post(f"/api/runs/{started_run.pk}/cancel/")
    response = owner_api.post(f"/api/runs/{started_run.pk}/resume/")
    assert response.status_code == 409
    assert "no checkpoint" in response.json()["detail"]


def test_resume_of_a_created_run_is_a_conflict(owner_api, run):
    response = owner_api.post(f"/api/runs/{run.pk}/resume/")
    assert response.status_code == 409 and response.json()["status"] == "created"


def test_resume_queues_from_the_latest_checkpoint(owner_api, started_run, broker, django_capture_on_commit_callbacks):
    owner_api.post(f"/api/runs/{started_run.pk}/cancel/")
    for step in (20, 40):
        Checkpoint.objects.create(run=started_run, step=step, path=f"/ckpt/{step}", created_at=timezone.now())
    with django_capture_on_commit_callbacks(execute=True):
        response = owner_api.post(f"/api/runs/{started_run.pk}/resume/")
    assert response.status_code == 200, response.content
    assert response.json()["status"] == "queued" and response.json()["attempt"] == 2
    _, spec = broker.call_args.kwargs["args"]
    assert spec["resume_from"] == "/ckpt/40"


def test_a_run_resumed_on_fewer_machines_is_queued_with_the_new_count_and_nothing_else_changed(
        owner_api, started_run, broker, django_capture_on_commit_callbacks):
    started_run.config = {**started_run.config, "trainer_machines": 2, "gradient_accumulation_steps": 2,
                          "per_device_train_batch_size": 4}
    started_run.save()
    before = dict(started_run.config)
    owner_api.post(f"/api/runs/{started_run.pk}/cancel/")
    Checkpoint.objects.create(run=started_run, step=2, path="/ckpt/2", created_at=timezone.now())
    with django_capture_on_commit_callbacks(execute=True):
        response = owner_api.post(f"/api/runs/{started_run.pk}/resume/", {"trainer_machines": 1}, format="json")
    assert response.status_code == 200, response.content
    assert response.json()["config"] == {**before, "trainer_machines": 1}
    _, spec = broker.call_args.kwargs["args"]
    assert spec["config"]["trainer_machines"] == 1 and spec["resume_from"] == "/ckpt/2"


@pytest.mark.parametrize("body, field, words", [
    ({"trainer_machines": 3}, "trainer_machines", "must divide gradient_accumulation_steps"),
    ({"learning_rate": 1.0}, "learning_rate", "unknown field; this body takes: trainer_machines"),
    ({"inference_machines": -1}, "inference_machines", "greater than or equal to 0"),
])
def test_a_resume_that_would_change_more_or_break_the_config_is_refused_and_the_run_stays_as_it_was(
        owner_api, started_run, body, field, words):
    owner_api.post(f"/api/runs/{started_run.pk}/cancel/")
    Checkpoint.objects.create(run=started_run, step=2, path="/ckpt/2", created_at=timezone.now())
    before = Run.objects.get(pk=started_run.pk)
    response = owner_api.post(f"/api/runs/{started_run.pk}/resume/", body, format="json")
    assert response.status_code == 400, response.content
    assert words in str(response.json()), response.json()
    assert field in str(response.json())
    after = Run.objects.get(pk=started_run.pk)
    assert (after.status, after.attempt, after.config) == (before.status, before.attempt, before.config)


def test_clone_makes_a_new_created_run_with_the_same_parts(owner_api, started_run):
    response = owner_api.post(f"/api/runs/{started_run.pk}/clone/", {"name": "again"}, format="json")
    assert response.status_code == 201, response.content
    clone = Run.objects.get(pk=response.json()["id"])
    assert clone.pk != started_run.pk and clone.status == RunStatus.CREATED and clone.name == "again"
    assert clone.dataset_id == started_run.dataset_id and clone.config == started_run.config
    assert clone.config_template_id == started_run.config_template_id
    assert [(r.reward_function_id, r.weight) for r in clone.run_rewards.all()] == \
        [(r.reward_function_id, r.weight) for r in started_run.run_rewards.all()]


def test_clone_without_a_name_marks_it_a_copy(owner_api, run):
    response = owner_api.post(f"/api/runs/{run.pk}/clone/")
    assert response.status_code == 201 and response.json()["name"] == "r1 (copy)"


def test_deleting_an_active_run_is_a_conflict(owner_api, started_run):
    response = owner_api.delete(f"/api/runs/{started_run.pk}/")
    assert response.status_code == 409 and "cancel it" in response.json()["detail"]
    assert Run.objects.filter(pk=started_run.pk).exists()


def test_a_finished_run_can_be_deleted(owner_api, started_run):
    owner_api.post(f"/api/runs/{started_run.pk}/cancel/")
    assert owner_api.delete(f"/api/runs/{started_run.pk}/").status_code == 204
    assert not Run.objects.filter(pk=started_run.pk).exists()


@pytest.mark.parametrize("action", ["start", "cancel", "resume", "clone"])
def test_actions_answer_only_post(owner_api, run, action):
    assert owner_api.get(f"/api/runs/{run.pk}/{action}/").status_code == 405


@pytest.mark.parametrize("breakage", ["no rewards", "stale config"])
def test_a_run_stored_broken_outside_the_api_cannot_start_and_says_why(owner_api, run, broker, breakage):
    if breakage == "no rewards":
        run.run_rewards.all().delete()
    else:
        Run.objects.filter(pk=run.pk).update(config={**run.config, "retired_knob": 1})
    response = owner_api.post(f"/api/runs/{run.pk}/start/")
    assert response.status_code == 409
    assert ("rewards" if breakage == "no rewards" else "retired_knob") in response.json()["detail"]
    run.refresh_from_db()
    assert run.status == RunStatus.CREATED and not broker.called


ALLOWED_BY_STATE = [
    ("created", False, ["start", "edit", "cancel", "clone", "delete"]),
    ("queued", False, ["cancel", "clone"]),
    ("starting", False, ["cancel", "clone"]),
    ("running", False, ["cancel", "clone"]),
    ("running", True, ["clone"]),  # cancel already asked for: the worker stops at its next heartbeat
    ("succeeded", False, ["clone", "delete"]),
    ("failed", False, ["resume", "clone", "delete"]),
    ("cancelled", True, ["resume", "clone", "delete"]),
    ("lost", False, ["resume", "clone", "delete"]),
]


@pytest.mark.parametrize("status, cancel_requested, allowed", ALLOWED_BY_STATE)
def test_a_run_says_which_actions_its_state_allows(owner_api, run, status, cancel_requested, allowed):
    Run.objects.filter(pk=run.pk).update(status=status, cancel_requested=cancel_requested)
    assert owner_api.get(f"/api/runs/{run.pk}/").json()["allowed_actions"] == allowed
    assert owner_api.get("/api/runs/").json()["results"][0]["allowed_actions"] == allowed


@pytest.mark.parametrize("status, cancel_requested, allowed", ALLOWED_BY_STATE)
@pytest.mark.parametrize("verb", ["start", "cancel", "resume"])
def test_the_verbs_agree_with_the_allowed_actions(owner_api, run, broker, status, cancel_requested, allowed, verb):
    Run.objects.filter(pk=run.pk).update(status=status, cancel_requested=cancel_requested)
    Checkpoint.objects.create(run=run, step=1, path="/ckpt/1", created_at=timezone.now())  # resume needs one
    response = owner_api.post(f"/api/runs/{run.pk}/{verb}/")
    if verb in allowed:
        assert response.status_code == 200, response.content
    elif not (verb == "cancel" and cancel_requested):  # asking twice is harmless, just not offered
        assert response.status_code == 409, response.content


def test_the_allowed_actions_are_read_only(owner_api, run):
    response = owner_api.patch(f"/api/runs/{run.pk}/", {"allowed_actions": []}, format="json")
    assert response.status_code == 200 and response.json()["allowed_actions"][0] == "start"


def test_a_resumed_run_charts_each_step_once_and_keeps_the_earlier_attempts_values(
        owner_api, anon_api, started_run, broker, django_capture_on_commit_callbacks):
    def report(steps, reward, source, token):
        events = [{"seq": i + 1, "type": "metrics", "step": step, "values": {"train/reward": reward}}
                  for i, step in enumerate(steps)]
        assert post_events(anon_api, started_run, events, token=token, source=source).status_code == 200

    report(range(1, 24), 0.25, "trainer:1", started_run.test_token)  # killed at step 23, its last checkpoint at 20
    Checkpoint.objects.create(run=started_run, step=20, path="/ckpt/20", created_at=timezone.now())
    Run.objects.filter(pk=started_run.pk).update(status=RunStatus.FAILED)
    with django_capture_on_commit_callbacks(execute=True):
        assert owner_api.post(f"/api/runs/{started_run.pk}/resume/").status_code == 200
    _, spec = broker.call_args.kwargs["args"]
    report(range(21, 26), 0.75, "trainer:2", spec["ingest"]["token"])
    answer = owner_api.get(f"/api/runs/{started_run.pk}/metrics/", {"earlier_attempts": "true"}).json()
    series = answer["series"]["train/reward"]
    assert series["step"] == list(range(1, 26))
    assert series["value"][19:] == [0.25] + [0.75] * 5
    assert answer["earlier_attempts"]["train/reward"] == {"step": [21, 22, 23], "value": [0.25] * 3,
                                                          "attempt": [1, 1, 1]}
    assert "earlier_attempts" not in owner_api.get(f"/api/runs/{started_run.pk}/metrics/").json()


@pytest.mark.parametrize("page", ["", "last", "0"])
def test_a_run_list_page_that_is_not_a_positive_whole_number_is_a_400_naming_it(owner_api, run, page):
    response = owner_api.get("/api/runs/", {"page": page})
    assert response.status_code == 400
    assert "page" in response.json() and "whole number" in response.json()["page"][0]
    assert owner_api.get("/api/runs/", {"page": "1"}).json()["count"] == 1
