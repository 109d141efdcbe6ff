"""A dataset's hub id is checked for the Hub's shape and for naming nothing on this machine."""
import pytest

from worker.trainer.hub_ids import dataset_hub_id_problem, is_hub_id


@pytest.mark.parametrize("name", ["openai/gsm8k", "gsm8k", "HuggingFaceH4/MATH-500", "a_b/c.d"])
def test_hub_ids_have_the_hubs_shape(name):
    assert is_hub_id(name) and dataset_hub_id_problem(name) is None


@pytest.mark.parametrize("name", ["", "/root/.cache/huggingface/datasets", "../data", "./data", "-x", "a/../b",
                                  "a/b/c", "hf://datasets/x/y", "~/data"])
def test_paths_are_not_hub_ids(name):
    assert not is_hub_id(name)
    assert "is not a hub id" in dataset_hub_id_problem(name)


def test_a_hub_shaped_name_of_a_local_folder_is_refused(tmp_path, monkeypatch):
    (tmp_path / "var" / "cache").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    assert "names a local file or folder here" in dataset_hub_id_problem("var/cache")


def test_the_datasets_librarys_own_readers_are_refused(trainer_stack_datasets):
    assert "local file readers" in dataset_hub_id_problem("json")


@pytest.fixture
def trainer_stack_datasets():
    pytest.importorskip("datasets")
