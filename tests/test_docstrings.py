"""Module docstrings of 12 lines at most, and the docs pages they point to exist.

A module's docstring says what it is for and why, in a few lines; the long why, the measured
facts and the protocols live in docs/ (a docstring points there: "Details: docs/page.md#section").
Read with `ast`; lines are those of the text between the quotes, blank ones at either end left out.
Scanned: runs/, worker/, client/, controlplane/ and scripts/. Not bench/, whose module docstrings
document what each benchmark measures and how to read its table (the script's own manual), nor
tests/, whose docstrings say what a test module holds and why it is written as it is.
"""
import ast
import re
from pathlib import Path

import pytest
from markdown.extensions.toc import slugify

pytestmark = pytest.mark.no_services

ROOT = Path(__file__).resolve().parent.parent
SCANNED = ("runs", "worker", "client", "controlplane", "scripts")
MOST_LINES = 12
DOCS_POINTER = re.compile(r"\bdocs/([\w./-]+\.md)(?:#([\w-]+))?")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*$", re.MULTILINE)
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)


def modules() -> list[Path]:
    return [path for folder in SCANNED for path in sorted((ROOT / folder).rglob("*.py"))]


def module_docstring(path: Path) -> str | None:
    return ast.get_docstring(ast.parse(path.read_text(), filename=str(path)), clean=False)


def docstring_lines(docstring: str) -> int:
    lines = docstring.splitlines()
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    return len(lines)


def anchors(page: Path) -> set[str]:
    """The ids mkdocs gives the page's headings (its toc extension's slugify; code fences left out)."""
    text = FENCE.sub("", page.read_text())
    return {slugify(heading.replace("`", ""), "-") for heading in HEADING.findall(text)}


def test_the_scan_reads_the_tree():
    assert len(modules()) > 200


def test_every_module_docstring_is_at_most_12_lines():
    too_long = []
    for path in modules():
        docstring = module_docstring(path)
        if docstring is not None and (count := docstring_lines(docstring)) > MOST_LINES:
            too_long.append(f"{path.relative_to(ROOT)}: {count} lines")
    assert too_long == [], (f"module docstrings over {MOST_LINES} lines; keep what the module is for "
                            "and why, move the rest to the docs page on its subject and point to it")


def test_every_docs_page_a_module_docstring_points_to_exists():
    broken = []
    for path in modules():
        for page, anchor in DOCS_POINTER.findall(module_docstring(path) or ""):
            target = ROOT / "docs" / page
            if not target.is_file():
                broken.append(f"{path.relative_to(ROOT)}: docs/{page} does not exist")
            elif anchor and anchor not in anchors(target):
                broken.append(f"{path.relative_to(ROOT)}: docs/{page} has no heading #{anchor}")
    assert broken == []


@pytest.mark.parametrize(("heading", "anchor"), [
    ("Judges' keys and endpoints", "judges-keys-and-endpoints"),
    ("What vLLM is given: `lora_serving`", "what-vllm-is-given-lora_serving"),
    ("`make run`", "make-run"),
])
def test_anchors_are_spelled_as_mkdocs_spells_them(tmp_path, heading, anchor):
    page = tmp_path / "page.md"
    page.write_text(f"# Title\n\n```sh\n# not a heading\n```\n\n## {heading}\n")
    assert anchors(page) == {"title", anchor}
