"""How every `grpo` command answers: a table (or a few lines) for people by default, one JSON
document on stdout with --json for scripts, and progress on stderr for work that takes a while."""
import argparse
import json
import sys
from typing import Any, TypeAlias

from tqdm import tqdm

from client.downloads import Progress

# What add_subparsers returns: each area module adds its verbs to it.
Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


def add_json_flag(command: argparse.ArgumentParser) -> None:
    command.add_argument("--json", action="store_true", help="print the API's answer as one JSON document")


def add_page_flag(command: argparse.ArgumentParser) -> None:
    command.add_argument("--page", type=int, default=1, help="which page of the listing (the API's pages)")


def add_list_verb(verbs: Subparsers, help: str, command: Any, paged: bool = True) -> argparse.ArgumentParser:
    """`list`: a page of the user's objects (--page), answered as a table or --json."""
    listing = verbs.add_parser("list", help=help)
    if paged:
        add_page_flag(listing)
    add_json_flag(listing)
    listing.set_defaults(command=command)
    return listing


def add_show_verb(verbs: Subparsers, noun: str, help: str, command: Any) -> argparse.ArgumentParser:
    """`show <noun id>`: one object, for people or --json."""
    show = verbs.add_parser("show", help=help)
    show.add_argument(noun, type=int, help=f"{noun} id")
    add_json_flag(show)
    show.set_defaults(command=command)
    return show


def print_json(answer: Any) -> None:
    print(json.dumps(answer, indent=2))


def say(words: str) -> None:
    """A line of progress or a note, on stderr: stdout stays the command's answer."""
    print(words, file=sys.stderr, flush=True)


def show_json(answer: Any) -> None:
    """A nested answer for people: indented JSON, keys in the API's order."""
    print(json.dumps(answer, indent=2, ensure_ascii=False))


class ByteProgress:
    """A bar of bytes so far of the total, on stderr, for a download; `callback` feeds it. The bar
    shows from the first bytes on, so that a refused download prints its reason alone."""

    def __init__(self, description: str):
        self.description = description
        self.bar: tqdm | None = None

    def callback(self) -> Progress:
        def advance(done: int, total: int | None) -> None:
            if self.bar is None:
                self.bar = tqdm(desc=self.description, total=total, unit="B", unit_scale=True, unit_divisor=1024,
                                file=sys.stderr, dynamic_ncols=True, mininterval=0.5)
            self.bar.update(done - self.bar.n)
        return advance

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def one_line(text: str, width: int = 60) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= width else flat[:width - 1] + "…"


def number(value: float | None, digits: int = 4) -> str:
    """A value the API may answer null for: blank when null."""
    return "" if value is None else f"{value:.{digits}g}"
