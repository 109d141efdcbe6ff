"""What every benchmark reports with: medians and percentiles of timings, and tables."""
import math
import statistics
import sys
from collections.abc import Iterable


def median(values: Iterable[float | None]) -> float | None:
    """The median of the values measured (None entries are skipped); None when there are none."""
    measured = [value for value in values if value is not None]
    return statistics.median(measured) if measured else None


def percentile(values: Iterable[float], pct: float) -> float:
    """The nearest-rank `pct`th percentile (0-100); NaN when there are no values."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    rank = min(len(ordered) - 1, max(0, math.ceil(pct / 100 * len(ordered)) - 1))
    return ordered[rank]


def fmt(value: float | None, digits: int = 2) -> str:
    """A number for a table cell; a dash for nothing measured."""
    return "—" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.{digits}f}"


def markdown_table(header: tuple, rows: Iterable[tuple]) -> str:
    """Rows under a header as a Markdown table, columns padded to line up in a terminal too."""
    cells = [tuple(str(c) for c in header)] + [tuple(str(c) for c in row) for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]

    def line(row):
        return "| " + " | ".join(cell.ljust(width) for cell, width in zip(row, widths)) + " |"

    rule = "|" + "|".join("-" * (width + 2) for width in widths) + "|"
    return "\n".join([line(cells[0]), rule] + [line(row) for row in cells[1:]])


def print_table(title: str, rows: list[dict]) -> None:
    """Rows of {column: value} under a title, as a Markdown table."""
    print(f"\n{title}")
    if not rows:
        print("  (nothing measured)")
    else:
        print(markdown_table(tuple(rows[0]), (tuple(row.values()) for row in rows)))
    sys.stdout.flush()
