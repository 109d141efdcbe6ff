"""Ids read from text: digits other than ASCII's and numbers past the database's ids are no id."""
import pytest

from runs.web.record_ids import MAX_ID, whole_number


@pytest.mark.parametrize("text, expected", [("7", 7), ("007", 7), (str(MAX_ID), MAX_ID)])
def test_ascii_digits_are_read_as_the_number_they_spell(text, expected):
    assert whole_number(text) == expected


@pytest.mark.parametrize("text", ["", "²", "١٢", "-1", "+3", " 4", "4 ", "1e3", str(MAX_ID + 1), "9" * 5000])
def test_anything_else_is_no_id(text):
    assert whole_number(text) is None


def test_a_smaller_bound_is_kept():
    assert whole_number("70", largest=64) is None
