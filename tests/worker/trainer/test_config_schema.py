"""The one training config schema: defaults, per-field errors, groups and presets."""
import json

import pytest
from pydantic import ValidationError

from worker.trainer.config import GROUPS, PRESETS, TrainingConfig, errors_by_field, field_groups


def errors_of(data) -> dict[str, list[str]]:
    with pytest.raises(ValidationError) as caught:
        TrainingConfig.model_validate(data)
    return errors_by_field(caught.value)


def errors_for(**values) -> dict[str, list[str]]:
    return errors_of(values)


def test_the_defaults_are_valid_and_survive_json():
    config = TrainingConfig()
    assert TrainingConfig.model_validate(json.loads(config.model_dump_json())) == config
    assert config.completions_per_step % config.num_generations == 0


def test_a_plain_field_error_is_keyed_by_the_field():
    errors = errors_for(temperature=-1)
    assert list(errors) == ["temperature"] and "greater than 0" in errors["temperature"][0]


def test_a_cross_field_rule_is_keyed_by_the_field_to_change():
    errors = errors_for(num_generations=8, per_device_train_batch_size=12)
    assert list(errors) == ["per_device_train_batch_size"]
    assert "(12)" in errors["per_device_train_batch_size"][0] and "(8)" in errors["per_device_train_batch_size"][0]


@pytest.mark.parametrize("values,field", [
    ({"epsilon": 0.3, "epsilon_high": 0.2}, "epsilon_high"),
    ({"warmup_steps": 10, "max_steps": 10}, "warmup_steps"),
    ({"vllm_max_model_len": 100, "max_prompt_length": 64, "max_completion_length": 64}, "vllm_max_model_len"),
    ({"gradient_accumulation_steps": 3, "per_device_train_batch_size": 8, "num_generations": 6}, None),
    ({"distributed": "fsdp2", "trainer_processes": 1}, "distributed"),
    ({"distributed": "none", "trainer_processes": 2, "gradient_accumulation_steps": 2}, "distributed"),
    ({"distributed": "fsdp2", "trainer_processes": 2, "gradient_accumulation_steps": 2, "lora": True}, "distributed"),
    ({"trainer_processes": 4, "gradient_accumulation_steps": 2}, "trainer_processes"),
    ({"trainer_machines": 2, "distributed": "none", "gradient_accumulation_steps": 2}, "distributed"),
    ({"trainer_machines": 3, "trainer_processes": 2, "gradient_accumulation_steps": 4}, "trainer_machines"),
    ({"inference_machines": 2, "weight_sync_backend": "nccl"}, "weight_sync_backend"),
    ({"inference_machines": 1, "lora": True}, "lora"),
    ({"inference_machines": 1, "cpu_sharing": "split_cores"}, "cpu_sharing"),
    ({"inference_machines": 1, "cpu_sharing": "overlap", "gradient_accumulation_steps": 3}, None),
])
def test_each_cross_field_rule(values, field):
    if field is None:
        assert TrainingConfig.model_validate(values).completions_per_step == 24
        return
    assert list(errors_for(**values)) == [field]


def test_a_process_count_the_batch_does_not_divide_names_both_numbers():
    message = errors_for(trainer_processes=3, gradient_accumulation_steps=8)["trainer_processes"][0]
    assert "trainer_processes (3)" in message and "gradient_accumulation_steps (8)" in message


def test_an_extra_field_is_named():
    assert errors_for(learning_rat=1e-5) == {"learning_rat": ["unknown setting 'learning_rat'"]}


def test_several_field_errors_are_all_reported():
    errors = errors_for(top_p=0, loss_type="ppo", worker_pool="no spaces allowed", model="")
    assert set(errors) == {"top_p", "loss_type", "worker_pool", "model"}


def test_a_non_object_is_a_non_field_error():
    assert list(errors_of([])) == ["non_field_errors"]


def test_field_groups_cover_every_field_once_in_known_groups():
    groups = field_groups()
    assert set(groups) == set(GROUPS)
    listed = [name for names in groups.values() for name in names]
    assert sorted(listed) == sorted(TrainingConfig.model_fields) and len(listed) == len(set(listed))
    assert all(groups.values()), "a group with no fields"


def test_every_field_has_help_text():
    assert all(info.description for info in TrainingConfig.model_fields.values())


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_every_preset_validates(name):
    config = TrainingConfig.model_validate(PRESETS[name])
    assert config.model_dump(include=set(PRESETS[name])) == PRESETS[name]


@pytest.mark.parametrize(("value", "kept"), [("auto", "auto"), (1, 1), (64, 64), (100_000, 100_000), ("16", 16)])
def test_max_inflight_tasks_takes_a_cap_or_auto(value, kept):
    assert TrainingConfig(max_inflight_tasks=value).max_inflight_tasks == kept


@pytest.mark.parametrize("value", [0, 100_001, -3, 2.5, "fast", "AUTO", "", None, True])
def test_max_inflight_tasks_refuses_anything_else_with_one_message_on_the_field(value):
    errors = errors_for(max_inflight_tasks=value)
    assert list(errors) == ["max_inflight_tasks"] and len(errors["max_inflight_tasks"]) == 1
    assert errors["max_inflight_tasks"][0].startswith('a whole number from 1 to 100000, or "auto"; not ')


def test_max_inflight_tasks_stays_a_fixed_64_by_default_and_auto_survives_json():
    assert TrainingConfig().max_inflight_tasks == 64
    config = TrainingConfig(max_inflight_tasks="auto")
    assert TrainingConfig.model_validate(json.loads(config.model_dump_json())).max_inflight_tasks == "auto"
