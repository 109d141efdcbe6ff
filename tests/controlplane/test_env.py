"""The strict environment readers: defaults when unset, ImproperlyConfigured naming the variable when malformed."""
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from controlplane.env import env_bool, env_int, env_list, env_path, env_str, env_url

NAME = "GRPO_TEST_SETTING"


@pytest.fixture
def setenv(monkeypatch):
    monkeypatch.delenv(NAME, raising=False)
    return lambda value: monkeypatch.setenv(NAME, value)


def test_unset_variables_give_the_defaults(setenv):
    assert env_str(NAME, "x") == "x"
    assert env_bool(NAME, True) is True
    assert env_int(NAME, 7) == 7
    assert env_list(NAME, ["a", "b"]) == ["a", "b"]
    assert env_url(NAME, "http://d", ("http",)) == "http://d"


@pytest.mark.parametrize("raw, expected", [
    ("1", True), ("true", True), ("Yes", True), (" on ", True),
    ("0", False), ("false", False), ("NO", False), ("off", False), ("", False),
])
def test_bool_accepts_the_usual_spellings(setenv, raw, expected):
    setenv(raw)
    assert env_bool(NAME, not expected) is expected


@pytest.mark.parametrize("raw", ["maybe", "2", "y", "enabled"])
def test_malformed_bool_raises_naming_the_variable(setenv, raw):
    setenv(raw)
    with pytest.raises(ImproperlyConfigured, match=NAME):
        env_bool(NAME)


def test_int_parses_and_treats_blank_as_unset(setenv):
    setenv("42")
    assert env_int(NAME, 1) == 42
    setenv("  ")
    assert env_int(NAME, 1) == 1


@pytest.mark.parametrize("raw", ["ten", "1.5", "0x10", "5 MB"])
def test_malformed_int_raises_naming_the_variable(setenv, raw):
    setenv(raw)
    with pytest.raises(ImproperlyConfigured, match=NAME):
        env_int(NAME, 1)


def test_int_below_minimum_raises(setenv):
    setenv("4")
    with pytest.raises(ImproperlyConfigured, match=f"{NAME}=4 must be at least 5"):
        env_int(NAME, 60, minimum=5)
    setenv("5")
    assert env_int(NAME, 60, minimum=5) == 5


def test_list_splits_on_commas_and_strips(setenv):
    setenv("example.org, localhost ,10.0.0.1")
    assert env_list(NAME, []) == ["example.org", "localhost", "10.0.0.1"]


@pytest.mark.parametrize("raw", ["a,,b", "a,", ",a", "a, ,b"])
def test_list_with_an_empty_item_raises_naming_the_variable(setenv, raw):
    setenv(raw)
    with pytest.raises(ImproperlyConfigured, match=NAME):
        env_list(NAME, [])


def test_list_default_is_a_copy(setenv):
    default = ["a"]
    env_list(NAME, default).append("b")
    assert default == ["a"]


def test_url_with_an_allowed_scheme_is_returned_as_is(setenv):
    setenv("postgres://user:pw@db:5432/grpo")
    assert env_url(NAME, "", ("postgres", "sqlite")) == "postgres://user:pw@db:5432/grpo"
    setenv("")
    assert env_url(NAME, "sqlite://", ("postgres", "sqlite")) == "sqlite://"


@pytest.mark.parametrize("raw", ["mysql://db/grpo", "localhost:6379", "redis//host", "http://x"])
def test_url_with_another_scheme_raises_naming_the_variable_and_the_schemes(setenv, raw):
    setenv(raw)
    with pytest.raises(ImproperlyConfigured, match=rf"{NAME}=.*expected redis://, rediss://"):
        env_url(NAME, "", ("redis", "rediss"))


def test_path_is_relative_to_the_base_unless_absolute(setenv, tmp_path):
    assert env_path(NAME, "var", tmp_path) == (tmp_path / "var").resolve()
    setenv("data/here")
    assert env_path(NAME, "var", tmp_path) == (tmp_path / "data" / "here").resolve()
    setenv(str(tmp_path / "abs"))
    assert env_path(NAME, "var", Path("/elsewhere")) == tmp_path / "abs"
    setenv("~/grpo")
    assert env_path(NAME, "var", tmp_path) == Path.home() / "grpo"


@pytest.mark.parametrize("raw", ["", "  "])
def test_list_set_but_empty_means_no_values(setenv, raw):
    setenv(raw)
    assert env_list(NAME, ["default"]) == []


def test_choice_accepts_a_listed_value_in_any_case(setenv):
    from controlplane.env import env_choice

    setenv("warning")
    assert env_choice(NAME, "INFO", ("DEBUG", "INFO", "WARNING")) == "WARNING"


def test_choice_outside_the_list_raises_naming_the_variable(setenv):
    from controlplane.env import env_choice

    setenv("LOUD")
    with pytest.raises(ImproperlyConfigured, match=f"{NAME}='LOUD' is not one of: DEBUG, INFO"):
        env_choice(NAME, "INFO", ("DEBUG", "INFO"))
