"""The command line reference, read from the parser `./grpo` itself uses (`client.cli.main.parser()`),
so a command added there is documented at the next build."""
import argparse
from collections.abc import Iterator

from scripts.docs.tables import prose, table


def commands(parser: argparse.ArgumentParser, path: str = "") -> Iterator[tuple[str, str, argparse.ArgumentParser]]:
    """(`grpo runs create`, its help line, its parser) for every command a user can type, in the
    parser's order. A command is a parser without subcommands of its own."""
    path = path or parser.prog
    subcommands = [action for action in parser._actions if isinstance(action, argparse._SubParsersAction)]
    if not subcommands:
        yield path, "", parser
    for action in subcommands:
        helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
        for name, child in action.choices.items():
            for found_path, found_help, found in commands(child, f"{path} {name}"):
                yield found_path, found_help or helps.get(name, ""), found


def argument_rows(parser: argparse.ArgumentParser) -> list[list[str]]:
    rows = []
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction | argparse._SubParsersAction):
            continue
        name = ", ".join(action.option_strings) or action.dest
        if action.option_strings and action.nargs != 0:
            name += f" {action.metavar or action.dest.upper()}"
        rows.append([f"`{name}`", "yes" if action.required else "", default_of(action), described(action)])
    return rows


def described(action: argparse.Action) -> str:
    text = prose(action.help or "")
    if action.choices:
        text += (" " if text else "") + "One of " + ", ".join(f"`{choice}`" for choice in action.choices) + "."
    return text


def default_of(action: argparse.Action) -> str:
    if action.default in (None, False, [], argparse.SUPPRESS):
        return ""
    return f"`{action.default}`"


def paragraphs(text: str | None) -> str:
    """Help text wrapped for a terminal, as Markdown paragraphs (blank lines separate them)."""
    blocks = (" ".join(block.split()) for block in (text or "").split("\n\n"))
    return "".join(prose(block) + "\n\n" for block in blocks if block)


def cli_markdown(parser: argparse.ArgumentParser) -> str:
    """What `--help` says first and last, the global options, then a section per command: its
    help line and a table of its arguments."""
    parts = ["## What `grpo --help` says\n\n" + paragraphs(parser.description) + paragraphs(parser.epilog),
             "## Options of every command\n\n" + options_table(parser)]
    for path, help_line, command in commands(parser):
        parts.append(f"## `{path}`\n\n{prose(help_line)}\n\n" + options_table(command))
    return "\n".join(parts)


def options_table(parser: argparse.ArgumentParser) -> str:
    rows = argument_rows(parser)
    return table(["Argument", "Required", "Default", "What it does"], rows) if rows else "No arguments.\n"
