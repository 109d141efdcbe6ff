"""The generators behind the reference pages (scripts/docs/), on small inputs."""
import argparse
from types import SimpleNamespace

import pytest
from mkdocs.exceptions import PluginError

from scripts.docs import hooks
from scripts.docs.cli_reference import cli_markdown, commands
from scripts.docs.settings_reference import read_settings
from scripts.docs.tables import prose, table

ENV_EXAMPLE = """\
# Settings of the thing: copy to .env.
# A=1 in this header is prose, not a setting.

# --- Web server ---------------------------------------
# Address and port of the server.
# HOST=127.0.0.1
# PORT=8000
# A secret; empty: generated.
# SECRET_KEY=

# --- make test (environment only) --------------------
# CI=true makes unreachable services a failure.
# CI=
"""


@pytest.fixture
def env_example(tmp_path):
    path = tmp_path / ".env.example"
    path.write_text(ENV_EXAMPLE)
    return path


def test_each_variable_has_its_default_section_and_comment(env_example):
    secret = next(s for s in read_settings(env_example) if s.name == "SECRET_KEY")
    assert (secret.default, secret.section, secret.comment) == ("", "Web server", "A secret; empty: generated.")


def test_variables_on_consecutive_lines_share_the_comment_above_the_first(env_example):
    by_name = {s.name: s for s in read_settings(env_example)}
    assert by_name["PORT"].comment == by_name["HOST"].comment == "Address and port of the server."
    assert by_name["PORT"].default == "8000"


def test_a_comment_that_reads_like_an_assignment_is_prose_not_a_variable(env_example):
    settings = read_settings(env_example)
    assert [s.name for s in settings] == ["HOST", "PORT", "SECRET_KEY", "CI"]
    assert settings[-1].comment == "CI=true makes unreachable services a failure."
    assert settings[-1].section == "make test (environment only)"


def test_a_table_cell_keeps_to_one_line_and_escapes_pipes():
    assert table(["a"], [["x | y\nz"]]).splitlines()[-1] == "| x \\| y z |"


def test_angle_brackets_outside_code_are_escaped_and_inside_code_kept():
    assert prose("POST /api/runs/<id>/ and `<id>`") == "POST /api/runs/&lt;id&gt;/ and `<id>`"


def tiny_cli() -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(prog="tool", description="A tool.\n\nIt does things.")
    areas = root.add_subparsers()
    runs = areas.add_parser("runs", help="runs")
    verbs = runs.add_subparsers()
    watch = verbs.add_parser("watch", help="follow a run")
    watch.add_argument("run", type=int)
    watch.add_argument("--every", type=float, default=2.0, help="seconds between looks")
    verbs.add_parser("list", help="your runs")
    return root


def test_every_leaf_command_is_found_with_its_help_line():
    assert [(path, help_line) for path, help_line, _ in commands(tiny_cli())] == [
        ("tool runs watch", "follow a run"), ("tool runs list", "your runs")]


def test_a_command_section_tables_its_arguments_with_their_defaults():
    markdown = cli_markdown(tiny_cli())
    assert "## `tool runs watch`" in markdown
    assert "| `--every EVERY` |  | `2.0` | seconds between looks |" in markdown
    assert "A tool.\n\nIt does things." in markdown


def test_a_page_asking_for_an_unknown_part_fails_the_build_naming_page_and_part():
    page = SimpleNamespace(file=SimpleNamespace(src_uri="reference/oops.md"))
    with pytest.raises(PluginError, match=r"reference/oops\.md: no generated part named 'nope'"):
        hooks.on_page_markdown("# Oops\n\n<!-- generated: nope -->\n", page=page)


def test_a_page_asking_for_a_part_gets_it_in_place_of_the_marker(monkeypatch):
    monkeypatch.setitem(hooks.PARTS, "settings", lambda: "| the table |")
    page = SimpleNamespace(file=SimpleNamespace(src_uri="reference/settings.md"))
    assert hooks.on_page_markdown("# S\n\n<!-- generated: settings -->\n", page=page) == "# S\n\n| the table |\n"
