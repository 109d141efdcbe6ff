"""The Markdown tables a benchmark printed (bench/report.py: markdown_table), read back as cells."""


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
