"""The sample-keeping knobs: bounds, a pick larger than a step, and configs saved before them."""
import pytest
from pydantic import ValidationError

from worker.trainer.config import PRESETS, TrainingConfig, errors_by_field


def errors_for(**values) -> dict[str, list[str]]:
    with pytest.raises(ValidationError) as caught:
        TrainingConfig.model_validate(values)
    return errors_by_field(caught.value)


def test_the_demo_keeps_every_completion_of_every_step():
    config = TrainingConfig.model_validate(PRESETS["cpu-demo"])
    assert (config.log_completions, config.samples_groups_per_step, config.samples_every_steps) == (True, 0, 1)


@pytest.mark.parametrize("field,value,message", [
    ("samples_groups_per_step", -1, "greater than or equal to 0"),
    ("samples_every_steps", 0, "greater than or equal to 1"),
    ("samples_every_steps", 10_000_000, "less than or equal to 1000000"),
    ("samples_groups_per_step", "some", "valid integer"),
])
def test_a_knob_out_of_bounds_is_refused_on_its_field(field, value, message):
    errors = errors_for(**{field: value})
    assert list(errors) == [field] and message in errors[field][0]


def test_more_groups_than_a_step_trains_is_refused_saying_how_many_it_has():
    errors = errors_for(num_generations=8, per_device_train_batch_size=8, gradient_accumulation_steps=2,
                        samples_groups_per_step=3)
    assert list(errors) == ["samples_groups_per_step"]
    assert "(3)" in errors["samples_groups_per_step"][0] and "2 groups" in errors["samples_groups_per_step"][0]


@pytest.mark.parametrize("legacy,kept", [
    ({"num_completions_to_log": 2, "logging_steps": 5, "per_device_train_batch_size": 32}, (True, 2, 5)),
    ({"num_completions_to_log": 0}, (False, 0, 1)),
    # The old default on a step of 1 group: it sent them all.
    ({"num_completions_to_log": 2, "num_generations": 8, "per_device_train_batch_size": 8}, (True, 0, 1)),
])
def test_a_config_saved_with_num_completions_to_log_keeps_what_it_kept(legacy, kept):
    config = TrainingConfig.model_validate(legacy)
    assert (config.log_completions, config.samples_groups_per_step, config.samples_every_steps) == kept
    assert "num_completions_to_log" not in config.model_dump()
