"""Config pages through the Django client: list, detail, create from the generated form,
inline errors (per field and cross-field), presets, edit, clone, delete and access."""
import pytest

from runs.configs.models import TrainingConfig
from runs.configs.form_fields import (
    config_field_groups, config_values_from_form, default_values, preset_values, validated_config
)
from worker.trainer.config import PRESETS, TrainingConfig as ConfigSchema, field_groups


def form_data(values: dict | None = None, name: str = "mine", **extra) -> dict:
    """What the browser posts for a form showing `values` (defaults elsewhere): every knob as
    text, checkboxes only when ticked, each marked as shown."""
    data = {"name": name, "description": ""}
    for knob, value in {**default_values(), **(values or {})}.items():
        if isinstance(value, bool):
            data[f"cfg-{knob}-shown"] = "1"
            if value:
                data[f"cfg-{knob}"] = "on"
        else:
            data[f"cfg-{knob}"] = "" if value is None else str(value)
    return {**data, **extra}


def test_an_empty_list_says_how_to_start(logged_in):
    html = logged_in.get("/configs/").content.decode()
    assert "No configs yet" in html and "/configs/new/?preset=cpu-demo" in html


def test_the_list_shows_only_the_users_configs(logged_in, config, other_user, library_for):
    theirs = library_for(other_user, "theirs")["config"]
    html = logged_in.get("/configs/").content.decode()
    assert config.name in html and theirs.name not in html


def test_the_form_has_an_input_for_every_knob_with_default_and_help(logged_in):
    html = logged_in.get("/configs/new/").content.decode()
    for name, info in ConfigSchema.model_fields.items():
        assert f'id="id_cfg-{name}"' in html, name
        assert info.description.split("(")[0].strip()[:30].replace("'", "&#x27;") in html, name
    assert html.count("Default: <code>") == len(ConfigSchema.model_fields)


def test_the_form_groups_knobs_as_the_schema_does(logged_in):
    html = logged_in.get("/configs/new/").content.decode()
    for group, names in field_groups().items():
        section = html.split(f'id="group-{group}"')[1].split("</fieldset>")[0]
        assert all(f'id="id_cfg-{name}"' in section for name in names), group


def test_a_valid_post_saves_complete_values_and_opens_the_detail(logged_in, owner):
    response = logged_in.post("/configs/new/", form_data({"max_steps": 7, "learning_rate": "3e-5",
                                                          "vllm_enforce_eager": False}, name="tuned"))
    saved = TrainingConfig.objects.get(owner=owner, name="tuned")
    assert response.status_code == 302 and response.url == f"/configs/{saved.pk}/"
    assert saved.values["max_steps"] == 7 and saved.values["learning_rate"] == 3e-5
    assert saved.values["vllm_enforce_eager"] is False
    assert saved.values == ConfigSchema.model_validate(saved.values).model_dump(mode="json")


def test_an_out_of_range_value_is_shown_next_to_its_field_and_nothing_is_saved(logged_in):
    response = logged_in.post("/configs/new/", form_data({"num_generations": 1}))
    assert response.status_code == 400
    html = response.content.decode()
    error = html.split('id="id_cfg-num_generations-error">')[1].split("</p>")[0]
    assert "greater than or equal to 2" in error
    assert 'value="1"' in html.split('id="id_cfg-num_generations"')[1].split(">")[0]
    assert not TrainingConfig.objects.exists()


def test_text_that_is_no_number_is_named_on_its_field(logged_in):
    html = logged_in.post("/configs/new/", form_data({"learning_rate": "fast"})).content.decode()
    assert "valid number" in html.split('id="id_cfg-learning_rate-error">')[1].split("</p>")[0]


def test_a_cross_field_rule_is_shown_on_the_field_to_change(logged_in):
    response = logged_in.post("/configs/new/", form_data({"per_device_train_batch_size": 6, "num_generations": 4}))
    assert response.status_code == 400
    error = response.content.decode().split('id="id_cfg-per_device_train_batch_size-error">')[1].split("</p>")[0]
    assert "multiple of num_generations" in error


def test_an_empty_optional_knob_is_saved_as_empty(logged_in, owner):
    logged_in.post("/configs/new/", form_data({"epsilon_high": None, "save_total_limit": None}))
    values = TrainingConfig.objects.get(owner=owner).values
    assert values["epsilon_high"] is None and values["save_total_limit"] is None


def test_a_missing_name_and_a_taken_name_are_refused_on_name(logged_in, config):
    html = logged_in.post("/configs/new/", form_data(name="")).content.decode()
    assert 'id="id_name-error"' in html
    html = logged_in.post("/configs/new/", form_data(name=config.name)).content.decode()
    assert "already have" in html.split('id="id_name-error">')[1].split("</p>")[0]
    assert TrainingConfig.objects.count() == 1


def test_a_preset_link_fills_the_form(logged_in):
    html = logged_in.get("/configs/new/?preset=cpu-demo").content.decode()
    wanted = preset_values("cpu-demo")
    assert f'value="{wanted["max_steps"]}"' in html.split('id="id_cfg-max_steps"')[1].split(">")[0]
    assert "CPU demo" in html and "GSM8K on one GPU" in html


def test_an_unknown_preset_falls_back_to_the_defaults(logged_in):
    html = logged_in.get("/configs/new/?preset=nope").content.decode()
    assert 'value="100"' in html.split('id="id_cfg-max_steps"')[1].split(">")[0]


def test_the_page_carries_every_preset_for_its_script(logged_in):
    response = logged_in.get("/configs/new/")
    assert set(response.context["presets_data"]["presets"]) == set(PRESETS)


def test_the_detail_marks_changed_knobs(logged_in, config):
    html = logged_in.get(f"/configs/{config.pk}/").content.decode()
    row = html.split('data-knob="max_steps"')[0].rsplit("<tr", 1)[1]
    assert "changed" in row
    assert 'class="changed"' not in html.split('data-knob="learning_rate"')[0].rsplit("<tr", 1)[1]


def test_editing_changes_the_stored_values(logged_in, config):
    response = logged_in.post(f"/configs/{config.pk}/edit/", form_data({**config.values, "max_steps": 9},
                                                                        name=config.name))
    assert response.status_code == 302
    config.refresh_from_db()
    assert config.values["max_steps"] == 9


def test_a_refused_edit_keeps_the_stored_values(logged_in, config):
    response = logged_in.post(f"/configs/{config.pk}/edit/", form_data({"epsilon": 0.5, "epsilon_high": 0.3},
                                                                       name=config.name))
    assert response.status_code == 400
    assert "at least epsilon" in response.content.decode()
    config.refresh_from_db()
    assert config.values["epsilon"] == 0.2


def test_clone_fills_the_new_form_without_storing_anything(logged_in, config):
    response = logged_in.get(f"/configs/{config.pk}/clone/")
    html = response.content.decode()
    assert f'value="{config.name} (copy)"' in html and 'action="/configs/new/"' in html
    assert 'value="5"' in html.split('id="id_cfg-max_steps"')[1].split(">")[0]
    assert TrainingConfig.objects.count() == 1


def test_delete_asks_first_then_deletes(logged_in, config):
    assert "cannot be undone" in logged_in.get(f"/configs/{config.pk}/delete/").content.decode()
    response = logged_in.post(f"/configs/{config.pk}/delete/")
    assert response.status_code == 302 and not TrainingConfig.objects.exists()


def test_deleting_a_config_keeps_the_runs_made_from_it(logged_in, run, config):
    assert "keep their own copy" in logged_in.get(f"/configs/{config.pk}/delete/").content.decode()
    logged_in.post(f"/configs/{config.pk}/delete/")
    run.refresh_from_db()
    assert run.config_template is None and run.config["max_steps"] == 5


@pytest.mark.parametrize("suffix", ["", "edit/", "clone/", "delete/"])
def test_another_users_config_is_not_found(client, other_user, config, suffix):
    client.force_login(other_user)
    assert client.get(f"/configs/{config.pk}/{suffix}").status_code == 404


def test_another_user_cannot_edit_or_delete_by_post(client, other_user, config):
    client.force_login(other_user)
    assert client.post(f"/configs/{config.pk}/edit/", form_data(name="x")).status_code == 404
    assert client.post(f"/configs/{config.pk}/delete/").status_code == 404
    config.refresh_from_db()
    assert config.name == "small"


def test_anonymous_users_are_sent_to_log_in(client, config):
    for url in ("/configs/", "/configs/new/", f"/configs/{config.pk}/"):
        response = client.get(url)
        assert response.status_code == 302 and response.url.startswith("/login/")


def test_config_field_groups_shows_errors_and_raw_values():
    groups = config_field_groups({"top_k": "x"}, {"top_k": ["not a number"]})
    knob = next(f for g in groups for f in g.fields if f.name == "top_k")
    assert knob.value == "x" and knob.errors == ["not a number"] and knob.kind == "integer"
    assert next(g for g in groups if g.key == "generation").has_errors


def test_form_values_round_trip_through_the_schema():
    data = form_data({"epsilon_high": None, "log_completions": False, "max_steps": 12})
    values, errors = validated_config(config_values_from_form(data))
    assert errors == {}
    assert values == {**default_values(), "epsilon_high": None, "log_completions": False, "max_steps": 12}


def test_max_inflight_tasks_auto_round_trips_through_a_text_input():
    knob = next(f for g in config_field_groups({"max_inflight_tasks": "auto"}) for f in g.fields
                if f.name == "max_inflight_tasks")
    assert knob.kind == "text" and knob.value == "auto" and knob.changed  # a number input would refuse "auto"
    for typed, stored in (("auto", "auto"), (" 12 ", 12)):
        values, errors = validated_config(config_values_from_form(form_data({"max_inflight_tasks": typed})))
        assert errors == {} and values["max_inflight_tasks"] == stored


def test_max_inflight_tasks_neither_a_cap_nor_auto_is_named_on_its_field():
    values, errors = validated_config(config_values_from_form(form_data({"max_inflight_tasks": "lots"})))
    assert values is None and list(errors) == ["max_inflight_tasks"] and '"auto"' in errors["max_inflight_tasks"][0]


def test_a_checkbox_left_off_the_form_keeps_its_default():
    data = {key: value for key, value in form_data().items() if not key.startswith("cfg-log_completions")}
    assert "log_completions" not in config_values_from_form(data)


def test_validated_config_reports_cross_field_problems_by_field():
    values, errors = validated_config({"warmup_steps": "10", "max_steps": "10"})
    assert values is None and "fewer than max_steps" in errors["warmup_steps"][0]
