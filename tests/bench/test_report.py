"""The shared reporting of bench/: percentiles, medians and tables every benchmark prints."""
import math

from bench.report import fmt, markdown_table, median, percentile


def test_percentiles_are_nearest_rank_on_unsorted_values():
    values = [5.0, 1.0, 4.0, 2.0, 3.0]
    assert [percentile(values, pct) for pct in (0, 20, 50, 95, 100)] == [1.0, 1.0, 3.0, 5.0, 5.0]
    assert math.isnan(percentile([], 50))


def test_the_median_skips_what_was_not_measured():
    assert median([3.0, None, 1.0, 2.0]) == 2.0
    assert median([None]) is None and fmt(None) == "—" and fmt(float("nan")) == "—" and fmt(1.234) == "1.23"


def test_a_table_lines_its_columns_up():
    table = markdown_table(("mode", "s"), [("full", "23.9"), ("lora", "19.2")]).splitlines()
    assert table[0] == "| mode | s    |" and table[1] == "|------|------|" and table[3] == "| lora | 19.2 |"
