"""A model-played dry run is queued, never played in the request: it answers 202 with where to poll,
as the schema documents; only who asked sees it; the consumer's task fails it saying why when the
model cannot play there, and plays a finished one no second time."""
import pytest

from runs.dry_runs import jobs as dry_run_jobs
from runs.environments import model_dry_run
from runs.environments.models.dry_run import EnvironmentDryRun, EnvironmentDryRunState
from runs.datasets.models import CheckState
from tests.support.api_schema import assert_as_documented


@pytest.fixture
def playable(monkeypatch):
    """Any model may play as far as the request is concerned; loading one here is an error."""
    monkeypatch.setattr("runs.environments.views.model_play_problem", lambda model: None)

    def never(model):
        raise AssertionError("the web process loaded a model")
    monkeypatch.setattr("runs.dry_runs.model_play.load", never)


def ask(api, environment, **body):
    return api.post(f"/api/environments/{environment.pk}/dry-run/", {"max_turns": 3, **body}, format="json")


def test_a_model_played_dry_run_is_queued_and_answered_at_once_as_documented(
        owner_api, calculator, playable, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks() as sent:
        response = ask(owner_api, calculator)
    assert response.status_code == 202, response.content
    body = response.json()
    assert (body["state"], body["progress"], body["turn"], body["max_turns"], body["result"]) == \
        ("queued", "queued", 0, 3, None)
    assert response["Location"] == body["url"] == f"/api/environments/{calculator.pk}/dry-runs/{body['id']}/"
    assert len(sent) == 1  # the task, sent once the request's transaction commits
    stored = EnvironmentDryRun.objects.get(pk=body["id"])
    assert stored.asked["row_values"]["prompt"] and stored.asked["prompt_column"] == "prompt"
    schema = owner_api.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    assert_as_documented(schema, "/api/environments/{id}/dry-run/", "post", response)
    assert_as_documented(schema, "/api/environments/{id}/dry-runs/{dry_run}/", "get", owner_api.get(body["url"]))


def test_progress_reads_queued_loading_turn_k_of_n_done(owner, calculator):
    dry_run = EnvironmentDryRun.ask(calculator, owner, {"max_turns": 4})
    seen = [dry_run.progress_text()]
    dry_run.mark_loading()
    seen.append(dry_run.progress_text())
    dry_run.mark_progress(2)
    seen.append(EnvironmentDryRun.objects.get(pk=dry_run.pk).progress_text())
    dry_run.finish({"turns": []})
    seen.append(dry_run.progress_text())
    assert seen == ["queued", "loading the model", "turn 2 of 4", "done"]


def test_another_user_does_not_see_ones_dry_run(owner_api, other_api, staff_api, calculator, playable):
    url = ask(owner_api, calculator).json()["url"]
    assert other_api.get(url).status_code == 404
    assert staff_api.get(url).status_code == 200


def test_a_model_the_consumer_cannot_play_fails_the_dry_run_saying_why(owner, calculator, settings, tmp_path):
    settings.MODELS_DIR = tmp_path / "models"
    dry_run = EnvironmentDryRun.ask(calculator, owner, {"model": "tiny-llama", "max_turns": 2})
    dry_run_jobs.run(model_dry_run.JOB, dry_run.pk)
    dry_run.refresh_from_db()
    assert dry_run.state == EnvironmentDryRunState.FAILED and "is not prepared on this machine" in dry_run.error


def test_a_finished_dry_run_delivered_again_is_not_played_again(owner, calculator, monkeypatch):
    dry_run = EnvironmentDryRun.ask(calculator, owner, {"model": "m", "max_turns": 2})
    dry_run.finish({"turns": ["kept"]})
    monkeypatch.setattr("runs.environments.model_dry_run.play_episode", None)  # would fail if called
    dry_run_jobs.run(model_dry_run.JOB, dry_run.pk)
    dry_run.refresh_from_db()
    assert (dry_run.state, dry_run.result) == (EnvironmentDryRunState.DONE, {"turns": ["kept"]})


def test_a_dry_run_on_a_dataset_still_being_checked_is_refused_with_its_state(owner_api, calculator, dataset):
    dataset.state, dataset.check_progress = CheckState.CHECKING, {"rows": 3000}
    dataset.save()
    response = ask(owner_api, calculator, turns=["#### 6"])
    assert response.status_code == 400
    assert response.json()["dataset"] == (f"dataset {dataset.name!r} is still being checked (3000 rows so far); "
                                          "use it once its page says it is ready")
