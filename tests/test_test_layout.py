"""Tests share helpers through `tests/support/` alone: a module under tests/ imports nothing else
under `tests.` (not another test module, a conftest.py or a helper beside the tests), read with
`ast`. Fixtures of a conftest.py need no import: pytest provides them. So a test module can be
moved, renamed or deleted without breaking another, and a shared helper has one obvious home."""
import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"
SUPPORT = "tests.support"


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def named_modules(tree: ast.AST, module: str, is_package: bool) -> list[tuple[int, str]]:
    """(line, module) for each module an import names, anywhere in the tree, relative ones made
    absolute. `from a import b` names `a.b`, since b may be a module."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            package = module.split(".") if is_package else module.split(".")[:-1]
            base = ".".join(package[:len(package) - node.level + 1] if node.level else [])
            base = ".".join(part for part in (base, node.module or "") if part)
            found += [(node.lineno, f"{base}.{alias.name}") for alias in node.names]
    return found


def outside_support(name: str) -> bool:
    """Whether a module name reaches under `tests.` anywhere but `tests.support`."""
    inside_tests = name == "tests" or name.startswith("tests.")
    return inside_tests and not (name == SUPPORT or name.startswith(SUPPORT + "."))


def violations_in(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names = named_modules(tree, module_name(path), path.name == "__init__.py")
    return [f"{path.relative_to(ROOT)}:{line} imports {name}" for line, name in names if outside_support(name)]


def test_modules_under_tests_import_helpers_from_tests_support_only():
    found = [violation for path in sorted(TESTS.rglob("*.py")) for violation in violations_in(path)]
    assert found == [], ("a module under tests/ imports from a test module, a conftest.py or a helper "
                         "outside tests/support/; move the shared helper into tests/support/:\n"
                         + "\n".join(found))


@pytest.mark.parametrize("source, module, is_package, expected", [
    ("from tests.support.seeds import seed\n", "tests.runs.test_x", False, []),
    ("from tests import support\n", "tests.runs.test_x", False, []),
    ("from ..support import seeds\n", "tests.runs.test_x", False, []),
    ("from tests.runs.test_y import helper\n", "tests.runs.test_x", False, ["tests.runs.test_y.helper"]),
    ("def f():\n    import tests.runs.conftest\n", "tests.runs.test_x", False, ["tests.runs.conftest"]),
    ("from .conftest import THING\n", "tests.runs.test_x", False, ["tests.runs.conftest.THING"]),
    ("from . import helpers\n", "tests.runs", True, ["tests.runs.helpers"]),
])
def test_the_scan_sees_every_import_under_tests_relative_ones_included(source, module, is_package, expected):
    names = named_modules(ast.parse(source), module, is_package)
    assert [name for _, name in names if outside_support(name)] == expected
