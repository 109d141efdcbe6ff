"""The docs/ site builds, strictly (a broken link or anchor is an error), with its generated
references complete; the README's links lead somewhere; the `./grpo` commands the docs show
still parse. This is how `make test` builds the docs."""
import argparse
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from client.cli.main import parser

ROOT = Path(__file__).resolve().parents[2]
MARKDOWN_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
TOP_FOLDERS = ("bench", "client", "controlplane", "docs", "frontend", "runs", "scripts", "tests", "worker")
# `worker/trainer/app.py` in a code span, `python -m bench.lora` in a command.
FOLDERS = "|".join(TOP_FOLDERS)
NAMED_PATH = re.compile(rf"`((?:{FOLDERS})/[\w./-]*)`")
NAMED_MODULE = re.compile(rf"-m ((?:{FOLDERS})(?:\.\w+)+)")


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The site, built once for this module's tests; a failed build fails each with mkdocs' output."""
    target = tmp_path_factory.mktemp("docs-site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}  # the theme's banner, not a finding
    build = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(target)],
                           cwd=ROOT, env=env, capture_output=True, text=True, timeout=240)
    assert build.returncode == 0, f"mkdocs build --strict failed:\n{build.stdout}\n{build.stderr}"
    return target


def page(site: Path, name: str) -> str:
    return (site / name / "index.html").read_text()


def env_example_variables() -> list[str]:
    return re.findall(r"^# ([A-Z][A-Z0-9_]*)=\S*$", (ROOT / ".env.example").read_text(), re.MULTILINE)


def cli_commands(command: argparse.ArgumentParser, path: str = "grpo") -> list[str]:
    subcommands = [action for action in command._actions if isinstance(action, argparse._SubParsersAction)]
    if not subcommands:
        return [path]
    return [found for action in subcommands for name, child in action.choices.items()
            for found in cli_commands(child, f"{path} {name}")]


def test_the_site_builds_strictly(site):
    assert (site / "index.html").is_file()
    assert (site / "architecture" / "index.html").is_file()


def test_the_settings_page_lists_every_variable_of_env_example(site):
    html = page(site, "reference/settings")
    variables = env_example_variables()
    assert len(variables) > 30
    assert [name for name in variables if f"<code>{name}</code>" not in html] == []


def test_the_cli_page_lists_every_command_of_the_parser(site):
    html = page(site, "reference/cli")
    commands = cli_commands(parser())
    assert "grpo runs create" in commands
    assert [command for command in commands if f"<code>{command}</code>" not in html] == []


def test_the_api_page_lists_every_operation_of_the_schema(site):
    from drf_spectacular.generators import SchemaGenerator

    schema = SchemaGenerator().get_schema(request=None, public=True)
    operation_ids = [operation["operationId"] for item in schema["paths"].values()
                     for key, operation in item.items() if key in ("get", "post", "put", "patch", "delete")]
    html = page(site, "reference/api")
    assert [name for name in operation_ids if f"<code>{name}</code>" not in html] == []


def test_the_config_page_lists_every_knob(site):
    from worker.trainer.config import TrainingConfig

    html = page(site, "reference/config")
    assert [name for name in TrainingConfig.model_fields if f"<code>{name}</code>" not in html] == []


def test_every_relative_link_in_the_readme_points_at_a_file_that_exists():
    links = MARKDOWN_LINK.findall((ROOT / "README.md").read_text())
    relative = [link.split("#")[0] for link in links if not re.match(r"[a-z]+:|#", link)]
    assert relative, "the README links into docs/"
    assert [link for link in relative if not (ROOT / link).exists()] == []


def documents() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def module_exists(dotted: str) -> bool:
    path = ROOT.joinpath(*dotted.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file() or (path / "__main__.py").is_file()


def test_every_file_and_module_the_docs_name_exists():
    """A file moved or renamed leaves no page pointing at where it was."""
    missing = []
    for document in documents():
        text = document.read_text()
        missing += [f"{document.relative_to(ROOT)}: {name}" for name in NAMED_PATH.findall(text)
                    if not (ROOT / name.split("#")[0]).exists()]
        missing += [f"{document.relative_to(ROOT)}: -m {name}" for name in NAMED_MODULE.findall(text)
                    if not module_exists(name)]
    assert missing == []


def shown_grpo_commands(text: str) -> list[str]:
    """Each `./grpo ...` command in the text's shell blocks, continuation lines joined, comments
    cut, `a; b` split."""
    shell = "\n".join(re.findall(r"^```(?:sh|bash)\n(.*?)^```", text, re.MULTILINE | re.DOTALL))
    commands = []
    for line in re.sub(r"\\\n\s*", " ", shell).splitlines():
        for part in line.split("#")[0].split(";"):
            if part.strip().startswith("./grpo "):
                commands.append(part.strip())
    return commands


def test_every_grpo_command_the_docs_show_parses():
    shown = [(path.relative_to(ROOT), command)
             for path in documents() for command in shown_grpo_commands(path.read_text())]
    assert shown, "the docs show the command line at work"
    refused = []
    for path, command in shown:
        try:
            parser().parse_args(shlex.split(command)[1:])
        except SystemExit:
            refused.append(f"{path}: {command}")
    assert refused == []
