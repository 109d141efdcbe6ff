"""Rows printed as aligned columns, as the `grpo` listings show them."""


def print_table(header: tuple, rows: list[tuple]) -> None:
    table = [tuple(map(str, header))] + [tuple(map(str, row)) for row in rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    for row in table:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())
