"""The Markdown tables a benchmark printed (bench/report.py: markdown_table), read back as cells,
and bench/load.py's table of targets checked."""

TARGET_ROWS = ("ingest POST p99", "page load p99", "web processes' RSS growth", "checkpoint upload",
               "download throughput", "download cut off half-way")


def tables_in(output: str) -> list[list[list[str]]]:
    """Each table printed, as rows of cells: its header row first, its rule left out."""
    tables, current = [], []
    for line in output.splitlines() + [""]:
        if line.startswith("|"):
            if not set(line) <= set("|-: "):  # the rule under the header
                current.append([cell.strip() for cell in line.strip().strip("|").split("|")])
        elif current:
            tables.append(current)
            current = []
    return tables


def table_rows(table: list[list[str]]) -> dict[str, list[str]]:
    """A table's rows under its header, by their first cell."""
    return {row[0]: row[1:] for row in table[1:]}


def rows_of(output: str) -> dict[str, list[str]]:
    """The rows of every table printed, by their first cell (the first header left out)."""
    cells = [[cell.strip() for cell in line.strip("|").split("|")] for line in output.splitlines()
             if line.startswith("| ")]
    return {row[0]: row[1:] for row in cells[1:]}


def check_load_table(output: str) -> None:
    """bench/load.py's table: every target has a row with a verdict, and what the load did (uploads,
    dry runs, reports) went through."""
    rows = rows_of(output)
    for name in TARGET_ROWS:
        (target, measured, verdict), = [cells for row, cells in rows.items() if row.startswith(name)]
        assert target and measured and verdict in ("met", "**missed**"), (name, target, measured, verdict)
    upload = next(cells for row, cells in rows.items() if row.startswith("checkpoint upload"))
    assert upload[1].startswith("2/2 listed as the manifest says") and upload[2] == "met"
    assert "0 refused" in next(cells for row, cells in rows.items() if row.startswith("ingest"))[1]
    dry_runs = next(cells for row, cells in rows.items() if row.startswith("2 dry runs"))
    assert dry_runs[1].count("done in") == 2
