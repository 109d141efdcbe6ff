"""A dataset's hub_id is a hub id, never a path on the worker: one naming a local folder (the
dataset cache, a folder beside the code) is refused when the dataset is created (live server), and
a launch spec that names one anyway fails the run in the trainer before datasets reads anything."""
from unittest import mock

import pytest

from tests.support import two_users


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with two_users.start(tmp_path_factory.mktemp("server")) as running:
        yield running


@pytest.mark.parametrize("hub_id, why", [
    ("/root/.cache/huggingface/datasets", "is not a hub id: give one such as 'openai/gsm8k'"),
    ("../var/runs", "is not a hub id: give one such as 'openai/gsm8k'"),
    # Hub-shaped, but a folder where the server runs (the project root): datasets would read it.
    ("frontend/templates", "names a local file or folder here, not a hub dataset"),
])
def test_a_hub_id_naming_a_local_folder_is_refused_and_nothing_is_created(server, hub_id, why):
    before = two_users.stored(server)
    with two_users.api(server, "second") as second:
        response = second.post("/api/datasets/", json={"name": "cache", "source": "hub", "hub_id": hub_id})
    assert response.status_code == 400, response.text
    (message,) = response.json()["hub_id"]
    assert message.startswith(f"{hub_id!r} {why}")
    assert two_users.stored(server) == before


def test_a_spec_naming_a_local_folder_as_its_hub_dataset_fails_the_run_before_loading(tmp_path):
    pytest.importorskip("datasets")
    from tests.support.trainers import trainer_for
    from worker.trainer.spec import DatasetSpec

    cache = tmp_path / "hf-cache" / "datasets"
    cache.mkdir(parents=True)
    trainer = trainer_for(tmp_path)
    trainer.spec = trainer.spec.model_copy(update={"dataset": DatasetSpec(kind="hub", hub_id=str(cache))})
    with mock.patch("datasets.load_dataset") as load:
        assert trainer.run() == "failed"
    load.assert_not_called()
    failed = two_users.trainer_outcome(tmp_path)
    assert failed["status"] == "failed"
    assert failed["message"] == (f"DatasetError: dataset hub_id refused: {str(cache)!r} is not a hub id: give "
                                 "one such as 'openai/gsm8k' (a local file is uploaded as a dataset, not named by "
                                 "its path)")

