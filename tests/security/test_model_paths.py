"""A run's model is a name, never a path: another user's checkpoint folder as `model` is refused
when the run is created (live server), as is an option such as `--help`; and a launch spec that
names a path anyway (an older control plane's) fails the run in the trainer before anything loads."""
from unittest import mock

import pytest

from tests.support import two_users


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with two_users.start(tmp_path_factory.mktemp("server")) as running:
        yield running


def test_another_users_checkpoint_folder_as_model_is_refused_and_nothing_is_created(server):
    before = two_users.stored(server)
    victims = server.seed["first"]["checkpoint_path"]
    with two_users.api(server, "second") as second:
        as_run = second.post("/api/runs/", json=two_users.run_payload(server, "second", model=victims))
        as_template = second.post("/api/configs/", json={"name": "stolen", "values": {"model": victims}})
    assert as_run.status_code == 400, as_run.text
    (message,) = as_run.json()["config"]["model"]
    assert message == (f"model {victims!r} is a path outside the directories the operator allows: it must be a hub "
                       "id (org/name or name), the name of a model prepared under the data directory's models/, or "
                       "an absolute path inside a directory the operator lists in the MODEL_DIRS setting")
    assert as_template.status_code == 400 and as_template.json()["values"]["model"] == [message]
    assert two_users.stored(server) == before


@pytest.mark.parametrize("model", ["--help", "../../runs/1/checkpoints/step-0000010"])
def test_an_option_or_a_relative_path_as_model_is_refused(server, model):
    before = two_users.stored(server)
    with two_users.api(server, "second") as second:
        response = second.post("/api/runs/", json=two_users.run_payload(server, "second", model=model))
    assert response.status_code == 400, response.text
    assert response.json()["config"]["model"] == [
        f"model {model!r} is not accepted: it must be a hub id (org/name or name), the name of a model prepared "
        "under the data directory's models/, or an absolute path inside a directory the operator lists in the "
        "MODEL_DIRS setting"]
    assert two_users.stored(server) == before


def test_a_spec_naming_a_checkpoint_folder_fails_the_run_before_anything_is_loaded(tmp_path, monkeypatch):
    pytest.importorskip("torch")
    from tests.support.trainers import trainer_for
    from worker.trainer.config import TrainingConfig

    monkeypatch.delenv("MODEL_DIRS", raising=False)
    victims = tmp_path / "runs" / "1" / "checkpoints" / "step-0000010"
    victims.mkdir(parents=True)
    (victims / "config.json").write_text('{"model_type": "llama"}')
    trainer = trainer_for(tmp_path, TrainingConfig(max_steps=1))
    trainer.spec = trainer.spec.model_copy(update={"model": str(victims)})  # as an older control plane sent it
    with mock.patch("worker.trainer.startup.datasets.load_dataset") as load_dataset, \
            mock.patch("worker.trainer.training.setup.load_policy") as load_policy:
        assert trainer.run() == "failed"
    load_dataset.assert_not_called()
    load_policy.assert_not_called()
    failed = two_users.trainer_outcome(tmp_path)
    assert failed["status"] == "failed"
    assert failed["message"].startswith(f"ModelRefused: model '{victims}' is a path outside the directories")
    assert "MODEL_DIRS" in failed["message"]

