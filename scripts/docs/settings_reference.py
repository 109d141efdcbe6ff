"""The settings reference, read from `.env.example`, which lists every setting once.

The file's shape: a section starts at `# --- Title ---`; comment lines describe the variables
that follow them; `# NAME=default` (a default without spaces) is a variable. Variables on consecutive lines share the
comment above the first (`HOST` and `PORT`), and a blank line ends a comment.
"""
import re
from dataclasses import dataclass
from pathlib import Path

from scripts.docs.tables import prose, table

SECTION = re.compile(r"^# -{3} (?P<title>.+?) -*$")
VARIABLE = re.compile(r"^# (?P<name>[A-Z][A-Z0-9_]*)=(?P<default>\S*)$")


@dataclass(frozen=True)
class Setting:
    name: str
    default: str
    section: str
    comment: str


def read_settings(env_example: Path) -> list[Setting]:
    settings, section, comment, previous_was_variable = [], "", [], False
    for line in env_example.read_text().splitlines():
        if heading := SECTION.match(line):
            section, comment, previous_was_variable = heading["title"].strip(), [], False
        elif variable := VARIABLE.match(line):
            settings.append(Setting(variable["name"], variable["default"], section, " ".join(comment)))
            previous_was_variable = True
        elif line.startswith("#") and section:
            comment = [] if previous_was_variable else comment
            comment.append(line.lstrip("#").strip())
            previous_was_variable = False
        elif not line.strip():
            comment, previous_was_variable = [], False
    return settings


def settings_markdown(env_example: Path) -> str:
    """A table per section, in the file's order: variable, default, what it does."""
    by_section: dict[str, list[Setting]] = {}
    for setting in read_settings(env_example):
        by_section.setdefault(setting.section, []).append(setting)
    parts = []
    for section, settings in by_section.items():
        rows = [[f"`{s.name}`", f"`{s.default}`" if s.default else "(empty)", prose(s.comment)] for s in settings]
        parts.append(f"## {section}\n\n" + table(["Variable", "Default", "What it does"], rows))
    return "\n".join(parts)
