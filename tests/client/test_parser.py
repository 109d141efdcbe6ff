"""The command tree `client.cli.main.parser()` builds, which the CLI reference is generated from: every
command and argument says what it is, and every command answers --json the same way."""
import argparse

from client.cli.main import parser


def commands(command: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    """(path, parser) for every command under `command`, leaves and areas."""
    yield path, command
    for action in command._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from commands(sub, (*path, name))


def test_every_command_and_argument_has_a_help_text():
    missing = [f"{' '.join(path) or 'grpo'} {action.dest}" for path, command in commands(parser())
               for action in command._actions
               if not isinstance(action, argparse._HelpAction | argparse._SubParsersAction) and not action.help]
    assert missing == []
    subcommands = [(path, action) for path, command in commands(parser()) for action in command._actions
                   if isinstance(action, argparse._SubParsersAction)]
    helpless = [f"{' '.join(path)} {choice.dest}" for path, action in subcommands
                for choice in action._choices_actions if not choice.help]
    assert helpless == []


def test_every_command_that_shows_an_answer_takes_json():
    """All but those whose whole answer is one line saying it is done (delete)."""
    leaves = [(path, command) for path, command in commands(parser()) if path and command._defaults.get("command")]
    without = [" ".join(path) for path, command in leaves
               if "--json" not in command._option_string_actions and path[-1] != "delete"]
    assert without == []
