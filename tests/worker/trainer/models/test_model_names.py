"""Names, not paths: which `model` strings resolve, and that every other one is refused by name."""
import pytest

from worker.trainer.models.paths import (ModelRefused, model_problem, models_dir, operator_model_dirs,
                                         resolve_model_path)


def model_dir(path):
    path.mkdir(parents=True)
    (path / "config.json").write_text("{}")
    return path


@pytest.fixture(autouse=True)
def no_operator_dirs(monkeypatch):
    monkeypatch.delenv("MODEL_DIRS", raising=False)


@pytest.mark.parametrize("model", ["HuggingFaceTB/SmolLM2-135M-Instruct", "gpt2", "Qwen/Qwen3-0.6B", "a_b/c.d-e"])
def test_hub_ids_are_accepted(model, tmp_path):
    assert model_problem(model, base=tmp_path) is None
    assert resolve_model_path(model, base=tmp_path) == model


@pytest.mark.parametrize("model", ["--help", "-x", "org/../other", "a/b/c", "./model", "../model", "~/model",
                                   "org/name/", "org--name", ".hidden", "model.git", "x" * 97])
def test_what_is_neither_a_hub_id_nor_an_absolute_path_is_refused_naming_what_is_accepted(model, tmp_path):
    with pytest.raises(ModelRefused, match="hub id .* MODEL_DIRS"):
        resolve_model_path(model, base=tmp_path)


def test_another_runs_checkpoint_folder_is_refused(tmp_path):
    checkpoint = model_dir(tmp_path / "runs" / "1" / "checkpoints" / "checkpoint-20")
    assert "outside the directories the operator allows" in model_problem(str(checkpoint), base=tmp_path)
    with pytest.raises(ModelRefused, match="MODEL_DIRS"):
        resolve_model_path(str(checkpoint), base=tmp_path)


def test_a_path_inside_model_dirs_or_the_models_folder_is_accepted(tmp_path, monkeypatch):
    listed = model_dir(tmp_path / "shared-models" / "llama")
    prepared = model_dir(models_dir(tmp_path) / "mine")
    monkeypatch.setenv("MODEL_DIRS", f"/nowhere, {tmp_path / 'shared-models'}")
    assert resolve_model_path(str(listed), base=tmp_path) == str(listed)
    assert resolve_model_path(str(prepared), base=tmp_path) == str(prepared)


def test_dot_dot_and_links_out_of_an_allowed_folder_are_resolved_before_judging(tmp_path, monkeypatch):
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    secret = model_dir(tmp_path / "runs" / "checkpoint-1")
    (allowed / "link").symlink_to(secret)
    monkeypatch.setenv("MODEL_DIRS", str(allowed))
    for model in (f"{allowed}/../runs/checkpoint-1", f"{allowed}/link"):
        with pytest.raises(ModelRefused, match="outside"):
            resolve_model_path(model, base=tmp_path / "data")


def test_a_hub_shaped_name_of_a_local_folder_is_refused(tmp_path, monkeypatch):
    model_dir(tmp_path / "var" / "cache")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ModelRefused, match="names a local folder"):
        resolve_model_path("var/cache", base=tmp_path / "data")


def test_a_prepared_model_is_found_by_name(tmp_path):
    prepared = model_dir(models_dir(tmp_path) / "tiny")
    assert resolve_model_path("tiny", base=tmp_path) == str(prepared)


def test_model_dirs_must_list_absolute_paths(monkeypatch):
    monkeypatch.setenv("MODEL_DIRS", "relative/models")
    with pytest.raises(ValueError, match="MODEL_DIRS lists directories as absolute paths.*relative/models"):
        operator_model_dirs()
