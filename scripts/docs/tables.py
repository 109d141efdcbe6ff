"""Markdown tables from rows of text, escaped so that no cell breaks the table."""
import html


def cell(text: str) -> str:
    """One line, with `|` escaped: a newline or a bare pipe would end the cell early."""
    return " ".join(str(text).split()).replace("|", "\\|")


def table(headers: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + " --- |" * len(headers)]
    lines += ["| " + " | ".join(cell(value) for value in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def prose(text: str) -> str:
    """Text from a comment or a help string as Markdown: `<id>` outside code spans is escaped,
    or Markdown would take it for an HTML tag and drop it."""
    pieces = str(text).split("`")
    return "`".join(piece if inside_code % 2 else html.escape(piece, quote=False)
                    for inside_code, piece in enumerate(pieces))
