"""MkDocs hooks (`hooks:` in mkdocs.yml): fill the reference pages' generated parts at build time.

A page asks for a part with a line `<!-- generated: NAME -->`, replaced by that part's Markdown.
Nothing generated is committed, so the pages cannot drift from `.env.example`, the CLI's parser,
the training config's schema or the API's schema. MkDocs loads this file by path, so the
project root is put on sys.path first.
"""
import re
import sys
from pathlib import Path

from mkdocs.exceptions import PluginError

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from scripts.docs import api_reference, cli_reference, config_reference, settings_reference  # noqa: E402

MARKER = re.compile(r"^<!-- generated: (?P<name>[a-z-]+) -->$", re.MULTILINE)


def settings_part() -> str:
    return settings_reference.settings_markdown(ROOT / ".env.example")


def cli_part() -> str:
    from client.cli.main import parser
    return cli_reference.cli_markdown(parser())


def api_part() -> str:
    return api_reference.api_markdown(api_reference.openapi_schema(ROOT))


PARTS = {"settings": settings_part, "cli": cli_part, "api-operations": api_part,
         "config": config_reference.config_markdown}


def on_config(config):
    """MkDocs restores sys.path after loading a hook; the parts import the project when called."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    return config


def on_page_markdown(markdown: str, page, **_) -> str:
    def generated(marker: re.Match) -> str:
        name = marker["name"]
        if name not in PARTS:
            raise PluginError(f"{page.file.src_uri}: no generated part named {name!r}; known: {', '.join(PARTS)}")
        return PARTS[name]()

    return MARKER.sub(generated, markdown)
