"""The pieces of runs/web/strict_bodies.py on their own: which JSON types a field takes, and when a
run-token body's schema is closed."""
import pytest
from pydantic import BaseModel, ConfigDict
from rest_framework import serializers

from runs.web.strict_bodies import json_type_problem, pydantic_body


class Closed(BaseModel):
    model_config = ConfigDict(extra="forbid")
    step: int


class Open(BaseModel):
    step: int


def test_a_run_token_body_is_closed_exactly_when_its_model_forbids_extra_fields():
    fields = {"step": serializers.IntegerField()}
    assert pydantic_body(Closed, fields).refuses_unknown_fields is True
    assert pydantic_body(Open, fields).refuses_unknown_fields is False


@pytest.mark.parametrize("field, value, problem", [
    (serializers.IntegerField(), True, "must be an integer, not a boolean"),
    (serializers.IntegerField(), 2.0, "must be an integer, not a number"),
    (serializers.FloatField(), False, "must be a number, not a boolean"),
    (serializers.BooleanField(), "true", "must be a boolean, not text"),
    (serializers.CharField(), {"a": 1}, "must be text (a JSON string), not an object"),
    (serializers.ListField(child=serializers.IntegerField()), [1, "2"], "each item must be an integer"),
])
def test_a_value_of_another_json_type_is_named_by_what_the_field_takes(field, value, problem):
    assert json_type_problem(field, value) == problem


@pytest.mark.parametrize("field, value", [
    (serializers.IntegerField(), 3), (serializers.FloatField(), 3), (serializers.BooleanField(), False),
    (serializers.CharField(), ""), (serializers.CharField(allow_null=True), None),
    (serializers.DictField(), "left to the field"), (serializers.ListField(child=serializers.CharField()), ["a"]),
])
def test_a_value_of_the_fields_json_type_passes(field, value):
    assert json_type_problem(field, value) is None
