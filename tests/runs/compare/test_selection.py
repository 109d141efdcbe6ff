"""Parsing the `runs` parameter: ids, repeats, and how many."""
import pytest

from runs.compare.selection import BadSelection, parse_run_ids


def test_ids_are_read_in_order_with_spaces_and_repeats_ignored():
    assert parse_run_ids(" 5, 3,5 ,, 9") == [5, 3, 9]


@pytest.mark.parametrize("text, message", [
    ("1,x", "'x' is not a run id"),
    ("1,-2", "'-2' is not a run id"),
    ("4", "at least 2 different runs"),
    ("4,4", "at least 2 different runs"),
    ("", "at least 2"),
    ("1,2,3,4,5,6,7,8,9", "at most 8 runs"),
])
def test_bad_selections_say_what_is_wrong(text, message):
    with pytest.raises(BadSelection, match=message):
        parse_run_ids(text)
