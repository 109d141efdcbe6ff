"""Config diff: only differing fields are listed as such; equal ones are kept apart."""
from runs.compare.diff import config_diff, flatten

BASE = {
    "dataset": {"name": "gsm8k", "kind": "hub", "split": "train"},
    "rewards": {"acc": {"weight": 1.0, "params": {"answer_column": "answer"}}},
    "config": {"learning_rate": 1e-6, "max_steps": 100, "epsilon_high": None},
}


def copy_of(settings: dict) -> dict:
    return {key: dict(value) if isinstance(value, dict) else value for key, value in settings.items()}


def test_flatten_joins_nested_keys_with_dots_and_keeps_lists_and_empty_dicts_whole():
    flat = flatten({"a": {"b": {"c": 1}}, "tags": [1, 2], "params": {}})
    assert flat == {"a.b.c": 1, "tags": [1, 2], "params": {}}


def test_configs_that_differ_in_one_nested_field_list_only_that_field_as_differing():
    changed = copy_of(BASE)
    changed["rewards"] = {"acc": {"weight": 1.0, "params": {"answer_column": "solution"}}}
    diff = config_diff({"1": BASE, "2": changed})
    assert diff["differing"] == [{"field": "rewards.acc.params.answer_column",
                                  "values": {"1": "answer", "2": "solution"}}]
    assert {"field": "config.learning_rate", "value": 1e-6} in diff["equal"]
    assert len(diff["equal"]) == len(flatten(BASE)) - 1


def test_identical_configs_have_no_differing_fields():
    diff = config_diff({"1": BASE, "2": copy_of(BASE), "3": copy_of(BASE)})
    assert diff["differing"] == []
    assert [entry["field"] for entry in diff["equal"]] == list(flatten(BASE))


def test_configs_that_differ_in_everything_have_no_equal_fields():
    other = {
        "dataset": {"name": "arith", "kind": "generator", "split": "test"},
        "rewards": {"acc": {"weight": 0.5, "params": {"answer_column": "y"}}},
        "config": {"learning_rate": 2e-5, "max_steps": 60, "epsilon_high": 0.28},
    }
    diff = config_diff({"1": BASE, "2": other})
    assert diff["equal"] == []
    assert [entry["field"] for entry in diff["differing"]] == list(flatten(BASE))
    assert diff["differing"][-1] == {"field": "config.epsilon_high", "values": {"1": None, "2": 0.28}}


def test_a_field_only_one_run_has_differs_and_the_other_run_is_absent_from_its_values():
    extra = copy_of(BASE)
    extra["rewards"] = {**BASE["rewards"], "format": {"weight": 0.2}}
    diff = config_diff({"1": BASE, "2": extra})
    assert diff["differing"] == [{"field": "rewards.format.weight", "values": {"2": 0.2}}]


def test_a_number_equals_the_same_number_as_a_float_but_a_bool_is_not_a_number():
    diff = config_diff({"1": {"a": 1, "b": True}, "2": {"a": 1.0, "b": 1}})
    assert [entry["field"] for entry in diff["equal"]] == ["a"]
    assert [entry["field"] for entry in diff["differing"]] == ["b"]
