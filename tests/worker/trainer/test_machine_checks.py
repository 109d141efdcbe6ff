"""A config checked against the model on this machine (worker/trainer/machine_checks.py), apart from
the schema: the schema answers the same everywhere, these checks name the field to change."""
import json

import pytest

from worker.trainer.config import TrainingConfig
from worker.trainer.machine_checks import problems_here


@pytest.fixture(autouse=True)
def models_allowed_in_tmp_path(tmp_path, monkeypatch):
    """Runs may name models by path in tmp_path, as in a folder an operator lists in MODEL_DIRS."""
    monkeypatch.setenv("MODEL_DIRS", str(tmp_path))


def model_folder(folder, model_type: str) -> str:
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"model_type": model_type}))
    return str(folder)


def tiny_llama_folder(folder) -> str:
    """A Llama's config.json alone: the LoRA check builds the model without weights."""
    pytest.importorskip("transformers")
    from worker.trainer.models.tiny import tiny_family_config

    tiny_family_config("llama", vocab_size=64).save_pretrained(folder)
    return str(folder)


def test_a_config_validates_the_same_with_and_without_its_model_here(tmp_path):
    values = {"model": str(tmp_path / "mamba"), "lora": True, "lora_target_modules": "q_proj,attn"}
    absent = TrainingConfig.model_validate(values).model_dump()
    model_folder(tmp_path / "mamba", "falcon_mamba")
    assert TrainingConfig.model_validate(values).model_dump() == absent
    assert problems_here(TrainingConfig.model_validate(values))  # while here, the model is refused


def test_a_model_of_a_family_the_trainer_cannot_reproduce_is_named_on_the_model_field(tmp_path):
    ((field, message),) = problems_here(TrainingConfig(model=model_folder(tmp_path / "mamba", "falcon_mamba")))
    assert field == "model" and "'falcon_mamba' is not supported" in message and "llama" in message
    assert problems_here(TrainingConfig(model=model_folder(tmp_path / "gemma", "gemma2"))) == []


def test_a_hub_id_not_downloaded_here_passes_where_the_run_loads_it():
    assert problems_here(TrainingConfig(model="some-org/not-downloaded-here"), model_must_be_here=True) == []


def test_a_model_path_missing_here_passes_unless_the_model_must_be_here(tmp_path):
    config = TrainingConfig(model=str(tmp_path / "elsewhere"))
    assert problems_here(config) == []  # the control plane: the worker's disk may hold it
    assert problems_here(config, model_must_be_here=True) == [
        ("model", f"model directory '{tmp_path / 'elsewhere'}' does not exist on this machine")]


def test_a_path_outside_the_allowed_folders_is_left_to_the_naming_check():
    assert problems_here(TrainingConfig(model="/etc"), model_must_be_here=True) == []


def test_lora_settings_the_model_here_cannot_take_are_named_on_their_field(tmp_path):
    model = tiny_llama_folder(tmp_path / "tiny")
    ((field, message),) = problems_here(TrainingConfig(model=model, lora=True, lora_target_modules="q_proj,attn"))
    assert field == "lora_target_modules" and "no linear layer named attn" in message
    ((field, message),) = problems_here(TrainingConfig(model=model, lora=True, lora_r=200))
    assert field == "lora_r" and "lora_r (200) is larger" in message
    assert problems_here(TrainingConfig(model=model, lora=True, lora_r=8, lora_target_modules="q_proj,v_proj")) == []
    assert problems_here(TrainingConfig(model=model, lora=False, lora_target_modules="attn")) == []
