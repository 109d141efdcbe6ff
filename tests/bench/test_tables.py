"""Reading back the tables a benchmark printed, which the smoke test checks."""
from bench.report import markdown_table
from tests.support.bench_tables import table_rows, tables_in


def test_each_printed_table_is_read_back_header_first_without_its_rule():
    output = "\n".join(["title", markdown_table(("mode", "s"), [("full", "23.9"), ("lora", "19.2")]), "",
                        "between", markdown_table(("a", "b"), [("1", "2")])])
    first, second = tables_in(output)
    assert first[0] == ["mode", "s"] and table_rows(first) == {"full": ["23.9"], "lora": ["19.2"]}
    assert second == [["a", "b"], ["1", "2"]]


def test_output_without_a_table_has_none():
    assert tables_in("no table here\n| a lone cell") == [[["a lone cell"]]] and tables_in("nothing") == []
