"""`./grpo`: the control plane from a shell. `./grpo --help` lists the areas, `./grpo AREA --help`
their commands.

The server comes from --url or GRPO_URL (default http://127.0.0.1:8000); plain http:// is for
this machine only, unless --insecure. The account's API token (the admin's Auth Token page, or
`manage.py drf_create_token <user>`) comes from GRPO_TOKEN, or from ~/.config/grpo/token (or the
file GRPO_TOKEN_FILE names) readable by you alone (chmod 600); never from a flag, which `ps`
would show.

Every command prints a table or a few lines for people; with --json, one JSON document on stdout
for scripts (the API's answer). Progress of long work (a download, a push, a dry run played by a
model) goes to stderr. A refused request prints the server's reason on one line.
"""
import argparse
import os
import sys
from collections.abc import Callable

import httpx

from client.api import ApiError, ControlPlane
from client.cli import checkpoints, compare, configs, datasets, environments, evaluations, rewards, runs, workers
from client.cli.inputs import InputRefused
from client.cli.jobs import JobFailed
from client.credentials import TOKEN_FLAG_REFUSAL, CredentialsError, check_url, names_token_flag, read_token, token_file
from client.exit_codes import INTERRUPTED, OK, REFUSED, SUMMARY, UNREACHABLE, USAGE

AREAS = (runs, datasets, rewards, configs, environments, checkpoints, compare, evaluations, workers)
# Flags that would carry a secret: refused before argparse, whose usage errors echo what they were given.
SECRET_FLAGS: tuple[tuple[Callable[[list[str]], bool], str], ...] = (
    (rewards.names_key_flag, rewards.KEY_FLAG_REFUSAL),
    (checkpoints.names_token_flag, checkpoints.TOKEN_FLAG_REFUSAL))


def main(argv: list[str] | None = None, api: ControlPlane | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if names_token_flag(argv):  # before parsing: the token is never echoed back in a usage line
        print(TOKEN_FLAG_REFUSAL.format(path=token_file(os.environ)), file=sys.stderr)
        return USAGE
    for names_flag, refusal in SECRET_FLAGS:
        if names_flag(argv):
            print(refusal, file=sys.stderr)
            return USAGE
    args = parser().parse_args(argv)  # a usage error exits 2 here
    if api is None:
        try:
            check_url(args.url, args.insecure)  # first: a refused URL needs no token read
            api = ControlPlane(args.url, read_token(), insecure=args.insecure)
        except CredentialsError as exc:
            print(f"grpo: {exc}", file=sys.stderr)
            return USAGE
    return run_command(api, args)


def run_command(api: ControlPlane, args: argparse.Namespace) -> int:
    """The command's exit code; every failure a one-line message on stderr, never a traceback."""
    try:
        return args.command(api, args) or OK
    except ApiError as exc:
        print(f"refused: {exc}", file=sys.stderr)
        return REFUSED
    except JobFailed as exc:
        print(f"grpo: {exc}", file=sys.stderr)
        return REFUSED
    except InputRefused as exc:
        print(f"grpo: {exc}", file=sys.stderr)
        return USAGE
    except httpx.TransportError as exc:
        print(f"grpo: cannot reach {api.url}: {exc or type(exc).__name__}", file=sys.stderr)
        return UNREACHABLE
    except KeyboardInterrupt:
        return INTERRUPTED


def parser() -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(prog="grpo", description=__doc__, epilog=SUMMARY,
                                   formatter_class=argparse.RawTextHelpFormatter)
    root.add_argument("--url", default=os.environ.get("GRPO_URL", "http://127.0.0.1:8000"),
                      help="the control plane (default: $GRPO_URL, else http://127.0.0.1:8000)")
    root.add_argument("--insecure", action="store_true",
                      help="send the token over plain http:// to another machine (a network you trust)")
    names = ",".join(area.__name__.removeprefix("client.cli.") for area in AREAS)
    areas = root.add_subparsers(required=True, metavar="{" + names + "}")
    for area in AREAS:
        area.add_parser(areas)
    return root
