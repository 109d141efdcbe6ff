"""A config or a run saved naming a model on this machine that the trainer cannot take is refused
with the field to change (worker/trainer/machine_checks.py, called by the serializers and the
page's form): the same 400 as when the schema itself read the machine."""
import json

import pytest

from runs.training_runs.models import Run
from runs.configs.models import TrainingConfig
from runs.configs.form_fields import validated_config


@pytest.fixture
def models_here(tmp_path, monkeypatch):
    """A folder runs may name models in (MODEL_DIRS), with a model of a family the trainer refuses."""
    monkeypatch.setenv("MODEL_DIRS", str(tmp_path))
    (tmp_path / "mamba").mkdir()
    (tmp_path / "mamba" / "config.json").write_text(json.dumps({"model_type": "falcon_mamba"}))
    return tmp_path


def test_a_config_naming_a_model_here_of_an_unknown_family_is_refused_on_the_model(owner_api, models_here):
    response = owner_api.post("/api/configs/", {"name": "c", "values": {"model": str(models_here / "mamba")}},
                              format="json")
    assert response.status_code == 400, response.content
    (message,) = response.json()["values"]["model"]
    assert "'falcon_mamba' is not supported" in message
    assert not TrainingConfig.objects.exists()


def test_a_run_naming_a_model_here_of_an_unknown_family_is_refused_on_the_model(owner_api, models_here, dataset,
                                                                                   reward):
    body = {"name": "trial", "dataset": dataset.pk, "rewards": [{"reward_function": reward.pk, "weight": 1.0}],
            "config": {"model": str(models_here / "mamba")}}
    response = owner_api.post("/api/runs/", body, format="json")
    assert response.status_code == 400, response.content
    assert "'falcon_mamba' is not supported" in response.json()["config"]["model"][0]
    assert not Run.objects.exists()


def test_lora_targets_the_model_here_lacks_are_refused_on_their_field(owner_api, tmp_path, monkeypatch):
    pytest.importorskip("transformers")
    from worker.trainer.models.tiny import tiny_family_config

    monkeypatch.setenv("MODEL_DIRS", str(tmp_path))
    tiny_family_config("llama", vocab_size=64).save_pretrained(tmp_path / "tiny")
    values = {"model": str(tmp_path / "tiny"), "lora": True, "lora_target_modules": "q_proj,attn"}
    response = owner_api.post("/api/configs/", {"name": "c", "values": values}, format="json")
    assert response.status_code == 400, response.content
    assert "no linear layer named attn" in response.json()["values"]["lora_target_modules"][0]


def test_a_model_path_that_is_not_on_the_control_plane_is_left_to_the_worker(owner_api, tmp_path, monkeypatch):
    monkeypatch.setenv("MODEL_DIRS", str(tmp_path))
    response = owner_api.post("/api/configs/", {"name": "c", "values": {"model": str(tmp_path / "on-a-worker")}},
                              format="json")
    assert response.status_code == 201, response.content


def test_the_pages_form_names_the_model_as_the_api_does(models_here):
    values, errors = validated_config({"model": str(models_here / "mamba")})
    assert values is None and "'falcon_mamba' is not supported" in errors["model"][0]
