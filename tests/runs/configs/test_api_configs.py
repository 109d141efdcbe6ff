"""Saved training configs: always complete and valid, errors reported per knob."""
import pytest

from runs.configs.models import TrainingConfig
from worker.trainer.config import PRESETS, TrainingConfig as ConfigSchema

DEFAULTS = ConfigSchema().model_dump(mode="json")


def create(client, **body):
    return client.post("/api/configs/", {"name": "c", **body}, format="json")


def test_partial_values_are_completed_with_defaults(owner_api):
    response = create(owner_api, values={"learning_rate": 3e-6, "max_steps": 20})
    assert response.status_code == 201, response.content
    values = response.json()["values"]
    assert values == {**DEFAULTS, "learning_rate": 3e-6, "max_steps": 20}
    assert TrainingConfig.objects.get(pk=response.json()["id"]).values == values


def test_no_values_at_all_gives_the_defaults(owner_api):
    response = create(owner_api)
    assert response.status_code == 201, response.content
    assert response.json()["values"] == DEFAULTS


def test_a_preset_is_applied_and_values_override_it(owner_api):
    response = create(owner_api, preset="cpu-demo", values={"max_steps": 7})
    assert response.status_code == 201, response.content
    values = response.json()["values"]
    preset_length = PRESETS["cpu-demo"]["max_completion_length"]
    assert values["max_completion_length"] == preset_length != DEFAULTS["max_completion_length"]
    assert values["max_steps"] == 7
    assert "preset" not in response.json()


def test_the_presets_are_listed_with_the_knobs_each_sets(owner_api):
    answer = owner_api.get("/api/configs/presets/")
    assert answer.status_code == 200
    assert {preset["name"]: preset["values"] for preset in answer.json()} == PRESETS


def test_an_unknown_preset_is_refused(owner_api):
    response = create(owner_api, preset="moon-shot")
    assert response.status_code == 400
    assert "preset" in response.json()


def test_an_invalid_value_is_reported_under_its_name(owner_api):
    response = create(owner_api, values={"temperature": -1})
    assert response.status_code == 400
    errors = response.json()["values"]
    assert list(errors) == ["temperature"]
    assert "greater than 0" in errors["temperature"][0]


def test_a_cross_field_rule_is_reported_under_the_field_to_change(owner_api):
    response = create(owner_api, values={"num_generations": 8, "per_device_train_batch_size": 12})
    assert response.status_code == 400
    message = response.json()["values"]["per_device_train_batch_size"][0]
    assert "multiple of num_generations (8)" in message


def test_an_unknown_knob_is_named(owner_api):
    response = create(owner_api, values={"learning_rat": 1e-5})
    assert response.status_code == 400
    assert response.json()["values"] == {"learning_rat": ["unknown setting 'learning_rat'"]}


def test_several_bad_values_are_all_reported(owner_api):
    response = create(owner_api, values={"temperature": 0, "top_p": 2, "loss_type": "ppo"})
    assert response.status_code == 400
    assert set(response.json()["values"]) == {"temperature", "top_p", "loss_type"}


@pytest.mark.parametrize("values", [[1, 2], "max_steps=5"])
def test_values_that_are_not_an_object_are_refused(owner_api, values):
    response = create(owner_api, values=values)
    assert response.status_code == 400
    assert "values" in response.json()


def test_an_update_changes_only_what_it_names(owner_api, config):
    response = owner_api.patch(f"/api/configs/{config.pk}/", {"values": {"temperature": 0.7}}, format="json")
    assert response.status_code == 200, response.content
    config.refresh_from_db()
    assert config.values["temperature"] == 0.7 and config.values["max_steps"] == 5


def test_an_invalid_update_leaves_the_config_as_it_was(owner_api, config):
    before = dict(config.values)
    response = owner_api.patch(f"/api/configs/{config.pk}/", {"values": {"num_generations": 1}}, format="json")
    assert response.status_code == 400 and "num_generations" in response.json()["values"]
    config.refresh_from_db()
    assert config.values == before


def test_a_rename_keeps_the_values(owner_api, config):
    before = dict(config.values)
    response = owner_api.patch(f"/api/configs/{config.pk}/", {"name": "renamed"}, format="json")
    assert response.status_code == 200, response.content
    config.refresh_from_db()
    assert config.name == "renamed" and config.values == before


def test_a_duplicate_name_is_refused(owner_api, config):
    response = create(owner_api, name=config.name)
    assert response.status_code == 400 and "name" in response.json()


def test_deleting_a_config_keeps_the_runs_made_from_it(owner_api, run, config):
    assert owner_api.delete(f"/api/configs/{config.pk}/").status_code == 204
    run.refresh_from_db()
    assert run.config_template is None and run.config["max_steps"] == 5


@pytest.mark.parametrize(("knob", "value", "said"), [("beta", True, "must be number"),
                                                     ("num_generations", "8", "must be integer"),
                                                     ("save_total_limit", "3", "must be integer or null"),
                                                     ("max_inflight_tasks", "8", 'must be integer or "auto"'),
                                                     ("max_inflight_tasks", True, 'must be integer or "auto"')])
def test_a_knob_sent_as_json_must_have_its_json_type(owner_api, knob, value, said):
    response = create(owner_api, name="typed", values={knob: value})
    assert response.status_code == 400 and response.json()["values"][knob] == [said]


@pytest.mark.parametrize("cap", ["auto", 8])
def test_max_inflight_tasks_sent_as_json_takes_a_cap_or_auto(owner_api, cap):
    response = create(owner_api, name="capped", values={"max_inflight_tasks": cap})
    assert response.status_code == 201, response.content
    assert response.json()["values"]["max_inflight_tasks"] == cap


def test_max_inflight_tasks_out_of_range_is_a_400_naming_both_forms(owner_api):
    response = create(owner_api, name="capped", values={"max_inflight_tasks": 0})
    assert response.status_code == 400
    assert response.json()["values"]["max_inflight_tasks"] == ['a whole number from 1 to 100000, or "auto"; not 0']


def test_a_text_field_sent_as_a_number_is_refused(owner_api):
    response = create(owner_api, name="described", description=0)
    assert response.status_code == 400 and "description" in response.json()


def test_the_schema_gives_each_knob_its_openapi_30_type_and_bounds():
    from runs.configs.serializers import knob_schema

    knobs = {name: {key: value for key, value in spec.items() if key != "description"}
             for name, spec in knob_schema()["properties"].items()}
    assert knobs["epsilon_high"] == {"type": "number", "minimum": 0.0, "exclusiveMinimum": True,
                                     "maximum": 10.0, "nullable": True}
    assert knobs["max_inflight_tasks"] == {"anyOf": [{"type": "integer", "minimum": 1, "maximum": 100_000},
                                                     {"type": "string", "enum": ["auto"]}]}
