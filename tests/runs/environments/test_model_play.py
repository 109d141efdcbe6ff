"""A dry run against a model prepared on this machine: its greedy turns, through the chat template,
answered by the environment; a model outside MODELS_DIR is never loaded. The request only queues it
(202): the consumer's task (dry_run_jobs.run, called here directly) plays it and the status answers."""
import pytest

pytest.importorskip("transformers")

from runs.dry_runs import jobs as dry_run_jobs  # noqa: E402
from runs.environments import model_dry_run  # noqa: E402
from runs.dry_runs.model_play import local_model_path, model_play_problem  # noqa: E402


@pytest.fixture(scope="module")
def models_dir(tmp_path_factory):
    from worker.trainer.models.tiny import build_tiny_model

    folder = tmp_path_factory.mktemp("data") / "models"
    build_tiny_model(folder / "tiny-llama")
    return folder


# The turns are written from the episode's event loop through another thread's connection, as in the
# consumer: no test transaction may hold SQLite's lock meanwhile.
@pytest.mark.django_db(transaction=True)
def test_the_model_plays_each_turn_and_the_environment_answers(owner_api, feedback, settings, models_dir):
    settings.MODELS_DIR = models_dir
    model = str(models_dir / "tiny-llama")
    response = owner_api.post(f"/api/environments/{feedback.pk}/dry-run/", {"model": model, "max_turns": 2},
                              format="json")
    assert response.status_code == 202, response.content
    assert response.json()["state"] == "queued" and response["Location"] == response.json()["url"]
    dry_run_jobs.run(model_dry_run.JOB, response.json()["id"])
    status = owner_api.get(response["Location"]).json()
    assert (status["state"], status["progress"], status["turn"], status["error"]) == ("done", "done", 2, "")
    body = status["result"]
    assert (body["environment"], body["dataset"], body["row"]) == (feedback.pk, feedback.dataset_id, 0)
    assert body["player"] == "model" and body["model"] == model and body["assistant_turns"] == 2
    assert body["end_reason"] == "max_turns" and body["tool_call_format"] == "text"
    assistant = [turn for turn in body["turns"] if turn["role"] == "assistant"]
    assert all(0 < turn["num_tokens"] <= 128 for turn in assistant)
    assert body["turns"][-1]["role"] == "user"  # the environment's feedback on the second answer


def test_only_models_prepared_under_models_dir_may_play(settings, models_dir, tmp_path):
    settings.MODELS_DIR = models_dir
    assert local_model_path(str(models_dir / "tiny-llama")) == (models_dir / "tiny-llama").resolve()
    assert model_play_problem("tiny-llama") is None  # a hub id resolves to its prepared copy
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "config.json").write_text("{}")
    assert local_model_path(str(elsewhere)) is None
    assert "is not prepared on this machine" in model_play_problem(str(elsewhere))
