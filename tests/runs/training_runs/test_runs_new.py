"""The new-run page (/runs/new/): choices offered, a valid form creates and queues a run,
every kind of mistake comes back inline with nothing stored."""
import pytest

from runs.training_runs.models import Run, RunStatus
from runs.configs.models import TrainingConfig
from worker.trainer.config import DEFAULT_MODEL, TrainingConfig as ConfigSchema


@pytest.fixture
def form(dataset, reward, config):
    """A complete, valid form: the dataset, one reward at weight 2, the saved config."""
    return {
        "name": "from the page", "dataset": str(dataset.pk), "reward": [str(reward.pk)], f"weight-{reward.pk}": "2",
        "config_template": str(config.pk), "model": DEFAULT_MODEL, "worker_pool": "default",
    }


def post(client, data, capture=None):
    if capture is None:
        return client.post("/runs/new/", data)
    with capture(execute=True):
        return client.post("/runs/new/", data)


def test_the_form_offers_the_users_library_and_the_found_models(logged_in, dataset, reward, config, other_user,
                                                                library_for):
    theirs = library_for(other_user, "theirs")
    html = logged_in.get("/runs/new/").content.decode()
    assert "arith" in html and "acc" in html and "small" in html
    assert "theirs-data" not in html and "theirs-reward" not in html and "theirs-config" not in html
    assert DEFAULT_MODEL in html and 'list="model-choices"' in html and 'list="pool-choices"' in html
    assert 'name="cfg-learning_rate"' in html  # the inline config editor (runs/configs/form_fields.py)
    assert theirs["run"].name not in html


def test_models_under_the_data_dir_are_offered(logged_in, dataset, reward, settings, tmp_path):
    settings.MODELS_DIR = tmp_path
    (tmp_path / "my-model").mkdir()
    (tmp_path / "my-model" / "config.json").write_text("{}")
    (tmp_path / "not-a-model").mkdir()
    html = logged_in.get("/runs/new/").content.decode()
    assert str(tmp_path / "my-model") in html and "not-a-model" not in html


def test_a_valid_form_creates_starts_and_queues_the_run(logged_in, form, reward, broker,
                                                        django_capture_on_commit_callbacks):
    response = post(logged_in, form, django_capture_on_commit_callbacks)
    run = Run.objects.get(name="from the page")
    assert response.status_code == 302 and response.url == f"/runs/{run.pk}/"
    assert run.status == RunStatus.QUEUED and run.attempt == 1
    assert [(rr.reward_function_id, rr.weight) for rr in run.run_rewards.all()] == [(reward.pk, 2.0)]
    assert run.config["max_steps"] == 5  # from the chosen config
    sent = broker.call_args.kwargs
    assert sent["args"][0] == run.pk and sent["queue"] == "default"


def test_the_worker_pool_and_model_typed_are_used(logged_in, form, broker, django_capture_on_commit_callbacks,
                                                  monkeypatch):
    monkeypatch.setenv("MODEL_DIRS", "/models")  # the operator lets runs name its models by path
    post(logged_in, {**form, "worker_pool": "gpu-a100", "model": "/models/mine"}, django_capture_on_commit_callbacks)
    run = Run.objects.get(name="from the page")
    assert run.config["worker_pool"] == "gpu-a100" and run.config["model"] == "/models/mine"
    assert broker.call_args.kwargs["queue"] == "gpu-a100"


def test_an_edited_copy_of_the_config_changes_only_the_run(logged_in, form, config, broker):
    values = {f"cfg-{name}": str(value) for name, value in config.values.items()
              if name not in ("model", "worker_pool") and not isinstance(value, bool) and value is not None}
    post(logged_in, {**form, **values, "edit_config": "on", "cfg-learning_rate": "0.0003"})
    run = Run.objects.get(name="from the page")
    assert run.config["learning_rate"] == 0.0003
    assert TrainingConfig.objects.get(pk=config.pk).values["learning_rate"] == config.values["learning_rate"]


def test_the_inline_editor_is_ignored_unless_ticked(logged_in, form, config, broker):
    post(logged_in, {**form, "cfg-learning_rate": "0.5"})
    assert Run.objects.get(name="from the page").config["learning_rate"] == config.values["learning_rate"]


def test_without_a_config_the_defaults_apply(logged_in, form, broker):
    post(logged_in, {**form, "config_template": ""})
    assert Run.objects.get(name="from the page").config["max_steps"] == ConfigSchema().max_steps


def test_a_blank_name_gets_a_dated_one(logged_in, form, broker):
    post(logged_in, {**form, "name": ""})
    assert Run.objects.get().name.startswith("run 20")


def refused(response) -> str:
    assert response.status_code == 400
    assert not Run.objects.filter(owner__username="owner").exists()  # nothing half-created
    html = response.content.decode()
    assert "The run was not started" in html and "Nothing was saved" in html
    return html


def test_no_dataset_is_an_inline_error(logged_in, form):
    html = refused(post(logged_in, {**form, "dataset": ""}))
    assert 'id="id_dataset-error">choose a dataset, or an environment<' in html


def test_no_reward_is_an_inline_error(logged_in, form, reward):
    html = refused(post(logged_in, {k: v for k, v in form.items() if k != "reward"}))
    assert 'id="rewards-error"' in html and "choose at least one reward function" in html


def test_a_bad_weight_is_shown_next_to_its_reward_and_kept_as_typed(logged_in, form, reward):
    html = refused(post(logged_in, {**form, f"weight-{reward.pk}": "heavy"}))
    assert f'id="weight-{reward.pk}-error"' in html and "valid number" in html
    assert 'value="heavy"' in html


def test_a_weight_out_of_range_is_refused_inline(logged_in, form, reward):
    html = refused(post(logged_in, {**form, f"weight-{reward.pk}": "1000"}))
    assert f'id="weight-{reward.pk}-error"' in html


def test_a_bad_worker_pool_is_shown_next_to_the_pool(logged_in, form):
    html = refused(post(logged_in, {**form, "worker_pool": "no spaces please"}))
    assert 'id="id_worker_pool-error"' in html and 'value="no spaces please"' in html


def test_an_empty_model_is_refused_inline(logged_in, form):
    html = refused(post(logged_in, {**form, "model": ""}))
    assert 'id="id_model-error"' in html


def test_a_bad_knob_in_the_inline_editor_is_shown_at_that_knob(logged_in, form):
    html = refused(post(logged_in, {**form, "edit_config": "on", "cfg-num_generations": "1"}))
    assert 'id="id_cfg-num_generations-error"' in html
    assert "<details class=\"inline-config\" id=\"inline-config\" open>" in html


def test_a_cross_field_rule_is_shown_at_the_knob_it_names(logged_in, form):
    html = refused(post(logged_in, {**form, "edit_config": "on", "cfg-num_generations": "3",
                                    "cfg-per_device_train_batch_size": "8"}))
    assert 'id="id_cfg-per_device_train_batch_size-error"' in html and "multiple of num_generations" in html


def test_another_users_dataset_cannot_be_used(logged_in, form, other_user, library_for):
    theirs = library_for(other_user, "theirs")
    html = refused(post(logged_in, {**form, "dataset": str(theirs["dataset"].pk)}))
    assert 'id="id_dataset-error"' in html


def test_another_users_reward_cannot_be_used(logged_in, form, other_user, library_for):
    theirs = library_for(other_user, "theirs")["reward"]
    html = refused(post(logged_in, {**form, "reward": [str(theirs.pk)], f"weight-{theirs.pk}": "1"}))
    assert 'id="rewards-error"' in html


def test_garbage_ids_are_inline_errors_not_crashes(logged_in, form):
    html = refused(post(logged_in, {**form, "dataset": "abc", "config_template": "'; drop", "reward": ["x"]}))
    assert 'id="id_dataset-error"' in html and 'id="id_config_template-error"' in html


def test_a_run_that_cannot_be_launched_leaves_nothing(logged_in, form, broker, monkeypatch):
    from pydantic import BaseModel

    class Spec(BaseModel):
        needed: int

    def broken_spec(run, token, resume_from=None):
        Spec.model_validate({})  # raises pydantic's ValidationError, as a bad launch spec does

    monkeypatch.setattr("runs.training_runs.lifecycle.build_launch_spec", broken_spec)
    html = refused(post(logged_in, form))
    assert "could not be launched" in html
    broker.assert_not_called()


def test_new_run_from_an_existing_one_is_prefilled(logged_in, run, reward):
    html = logged_in.get(f"/runs/new/?from={run.pk}").content.decode()
    assert 'value="r1 (copy)"' in html
    assert f'name="reward" value="{reward.pk}" id="reward-{reward.pk}" checked' in html


def test_new_run_from_another_users_run_is_404(logged_in, other_user, library_for):
    theirs = library_for(other_user, "theirs")["run"]
    assert logged_in.get(f"/runs/new/?from={theirs.pk}").status_code == 404


def test_an_empty_library_says_what_to_make_first(logged_in):
    html = logged_in.get("/runs/new/").content.decode()
    assert "No datasets yet" in html and "No reward functions yet" in html and 'id="new-run-form"' not in html


def test_an_evaluation_dataset_and_its_rewards_chosen_on_the_form_are_stored(
        logged_in, form, dataset, reward, broker, django_capture_on_commit_callbacks):
    post(logged_in, {**form, "eval_dataset": str(dataset.pk), "eval_reward": [str(reward.pk)],
                     f"eval-weight-{reward.pk}": "0.5"}, django_capture_on_commit_callbacks)
    run = Run.objects.get(name="from the page")
    assert run.eval_dataset == dataset
    assert [(rr.reward_function_id, rr.weight) for rr in run.run_eval_rewards.all()] == [(reward.pk, 0.5)]


def test_evaluating_without_an_evaluation_set_comes_back_next_to_the_evaluation_dataset(logged_in, form):
    response = post(logged_in, {**form, "edit_config": "on", "cfg-eval_steps": "5"})
    html = response.content.decode()
    assert response.status_code == 400 and 'id="id_eval_dataset-error"' in html and "eval_holdout_fraction" in html
    assert not Run.objects.exists()


def test_starting_from_another_users_checkpoint_comes_back_inline(logged_in, form, config, other_user, library_for):
    from django.utils import timezone

    from runs.checkpoints.models.checkpoint import Checkpoint

    theirs = Checkpoint.objects.create(run=library_for(other_user, "theirs")["run"], step=10, path="/w/step-10",
                                       created_at=timezone.now())
    values = {f"cfg-{name}": str(value) for name, value in config.values.items()
              if name not in ("model", "worker_pool") and not isinstance(value, bool) and value is not None}
    response = post(logged_in, {**form, **values, "edit_config": "on", "cfg-init_checkpoint": str(theirs.pk)})
    assert response.status_code == 400
    assert f"no checkpoint {theirs.pk} that you can see" in response.content.decode()
    assert not Run.objects.filter(name="from the page").exists()
