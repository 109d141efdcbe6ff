"""Environment pages, server side: the list and its one-click built-ins, a form per kind saving
through the API's serializer, the code permission, delete, the dry-run panel's settings; and an
environment on the new-run page and the run page."""
import json
import re

import pytest

from runs.environments.models.environment import Environment
from runs.training_runs.models import Run
from worker.trainer.config import DEFAULT_MODEL


def dry_run_config(html: str) -> dict:
    return json.loads(re.search(r'<script id="dry-run-config" type="application/json">(.*?)</script>', html).group(1))


def test_the_list_offers_each_kind_and_the_builtin_environments(logged_in, calculator, other_user):
    Environment.objects.create(owner=other_user, name="theirs", kind="builtin", builtin="feedback")
    html = logged_in.get("/environments/").content.decode()
    assert ">calc<" in html and "theirs" not in html and "acc ×1" in html
    assert "/environments/new/builtin/" in html and "/environments/new/verifiers/" in html
    assert 'id="make-builtins"' in html
    assert 'class="button disabled"' in html  # code needs the permission: not a link


def test_the_builtin_environments_are_made_once_in_one_click(logged_in, owner):
    for _ in range(2):
        response = logged_in.post("/environments/builtins/")
        assert response.status_code == 302 and response.url == "/environments/"
    environments = Environment.objects.filter(owner=owner).order_by("name")
    assert [(e.name, e.builtin) for e in environments] == [("Calculator: arithmetic", "calculator"),
                                                          ("Feedback: arithmetic", "feedback")]
    calculator = environments[0]
    assert calculator.dataset.generator_params["difficulty"] == 3
    assert [er.reward_function.builtin for er in calculator.environment_rewards.all()] == ["accuracy"]
    assert calculator.params == {"cost_per_call": 0.0, "max_result_chars": 200}


def test_a_builtin_is_created_from_its_generated_form(logged_in, dataset, reward):
    html = logged_in.get("/environments/new/builtin/").content.decode()
    assert 'name="calculator-cost_per_call" value="0.0"' in html and 'name="feedback-answer_column"' in html
    response = logged_in.post("/environments/new/builtin/", {
        "name": "fb", "builtin": "feedback", "dataset": str(dataset.pk), "rubric": [str(reward.pk)],
        f"weight-{reward.pk}": "2", "feedback-turn_penalty": "0.1", "feedback-answer_column": "answer"})
    environment = Environment.objects.get(name="fb")
    assert response.status_code == 302 and response.url == f"/environments/{environment.pk}/"
    assert environment.params == {"turn_penalty": 0.1, "answer_column": "answer"}
    assert [(er.reward_function_id, er.weight) for er in environment.environment_rewards.all()] == [(reward.pk, 2.0)]


def test_mistakes_come_back_on_the_form_and_nothing_is_saved(logged_in, dataset):
    response = logged_in.post("/environments/new/builtin/", {
        "name": "fb", "builtin": "calculator", "dataset": str(dataset.pk), "calculator-cost_per_call": "lots"})
    html = response.content.decode()
    assert response.status_code == 400 and not Environment.objects.exists()
    assert "&#x27;lots&#x27; is not a number" in html
    response = logged_in.post("/environments/new/builtin/", {"name": "fb", "builtin": "calculator"})
    html = response.content.decode()
    assert "choose the dataset whose rows the episodes start from" in html and "choose at least one reward" in html


def test_code_needs_the_permission_to_be_written(logged_in, dataset, reward):
    html = logged_in.get("/environments/new/code/").content.decode()
    assert 'id="code-refusal"' in html and "readonly" in html
    response = logged_in.post("/environments/new/code/", {
        "name": "mine", "source": "def step(m, r):\n    return None\n", "dataset": str(dataset.pk),
        "rubric": [str(reward.pk)]})
    assert response.status_code == 403 and not Environment.objects.exists()


def test_code_is_created_from_the_starter_and_an_error_names_its_line(logged_in, author, dataset, reward):
    html = logged_in.get("/environments/new/code/").content.decode()
    assert "def step(messages, row):" in html and "TOOLS = " in html
    from runs.environments.forms import STARTER_SOURCE

    form = {"name": "mine", "dataset": str(dataset.pk), "rubric": [str(reward.pk)]}
    response = logged_in.post("/environments/new/code/", {**form, "source": STARTER_SOURCE})
    assert response.status_code == 302, response.content.decode()[-2000:]
    response = logged_in.post("/environments/new/code/", {**form, "name": "bad", "source": "def step(messages, row)\n"})
    assert response.status_code == 400 and "line 1: syntax error" in response.content.decode()


def test_a_verifiers_form_says_the_package_is_missing(logged_in, author, monkeypatch):
    for where in ("worker.trainer.environments.verifiers_check", "runs.environments.pages"):
        monkeypatch.setattr(f"{where}.installed", lambda module: False)
    html = logged_in.get("/environments/new/verifiers/").content.decode()
    assert "verifiers package is not installed where the control plane runs" in html
    response = logged_in.post("/environments/new/verifiers/", {"name": "vf", "verifiers_id": "vf-math",
                                                               "params_json": "{not json"})
    assert response.status_code == 400 and "not JSON" in response.content.decode()


def test_the_edit_page_holds_the_dry_run_panel(logged_in, guess, dataset, author, settings, tmp_path):
    settings.MODELS_DIR = tmp_path
    html = logged_in.get(f"/environments/{guess.pk}/").content.decode()
    config = dry_run_config(html)
    assert config["url"] == f"/api/environments/{guess.pk}/dry-run/" and config["dataset"] == dataset.pk
    assert config["sourceApi"] == f"/api/environments/{guess.pk}/" and config["models"] == []
    assert "is not prepared on this machine" in config["modelProblem"]
    assert 'id="env-source"' in html and "environment_dry_run.js" in html


def test_deleting_an_environment_in_use_says_which_run(logged_in, calculator, run):
    run.environment = calculator
    run.save()
    response = logged_in.post(f"/environments/{calculator.pk}/delete/", follow=True)
    assert "cannot be deleted: still used by run r1" in response.content.decode()
    run.delete()
    assert logged_in.post(f"/environments/{calculator.pk}/delete/").url == "/environments/"
    assert not Environment.objects.exists()


def test_someone_elses_environment_is_not_found(client, other_user, calculator):
    client.force_login(other_user)
    assert client.get(f"/environments/{calculator.pk}/").status_code == 404


@pytest.fixture
def run_form(config):
    return {"name": "on an environment", "config_template": str(config.pk), "model": DEFAULT_MODEL,
            "worker_pool": "default"}


def test_the_new_run_page_starts_a_run_on_an_environment_alone(logged_in, calculator, run_form, broker, dataset,
                                                               django_capture_on_commit_callbacks):
    assert f'<option value="{calculator.pk}">calc (built-in calculator)</option>' in \
        logged_in.get("/runs/new/").content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        response = logged_in.post("/runs/new/", {**run_form, "environment": str(calculator.pk)})
    run = Run.objects.get(name="on an environment")
    assert response.status_code == 302 and run.environment == calculator and run.dataset == dataset
    assert broker.call_args.kwargs["args"][1]["environment"]["builtin"] == "calculator"
    page = logged_in.get(f"/runs/{run.pk}/").content.decode()
    assert 'id="run-environment"' in page and ">calc</a>" in page
    copy = logged_in.get(f"/runs/new/?from={run.pk}").content.decode()
    assert f'<option value="{calculator.pk}" selected>' in copy


def test_a_verifiers_environments_dataset_page_names_the_environment(logged_in, owner):
    environment = Environment.objects.create(owner=owner, name="vf", kind="verifiers", verifiers_id="vf-math",
                                             params={"num_train_examples": 100})
    html = logged_in.get(f"/datasets/{environment.dataset_id}/").content.decode()
    assert "verifiers environment <code>vf-math</code>" in html
    assert "which the worker loads from the environment" in html
    assert "verifiers environment <code>vf-math</code>" in logged_in.get("/datasets/").content.decode()
