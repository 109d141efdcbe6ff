"""What the command line reads besides its flags (JSON files, source files, KEY=VALUE pairs), and
the refusal that names the flag and the file when one cannot be used (exit 2)."""
import json
from pathlib import Path
from typing import Any


class InputRefused(Exception):
    """A local file or flag that cannot be used; the message says which and why."""


def read_text(path: Path, flag: str) -> str:
    try:
        return path.read_text()
    except (OSError, UnicodeError) as exc:
        raise InputRefused(f"{flag} {path}: {exc.strerror if isinstance(exc, OSError) else exc}") from None


def read_json_object(path: Path, flag: str) -> dict[str, Any]:
    try:
        value = json.loads(read_text(path, flag))
    except ValueError as exc:
        raise InputRefused(f"{flag} {path} is not JSON: {exc}") from None
    if not isinstance(value, dict):
        raise InputRefused(f"{flag} {path} holds a {type(value).__name__}, not an object")
    return value


def read_secret(path: Path | None, flag: str, environ_value: str) -> str | None:
    """A key or token from the file `flag` names, else from the environment; None: neither."""
    if path is not None:
        secret = read_text(path, flag).strip()
        if not secret:
            raise InputRefused(f"{flag} {path} is empty")
        return secret
    return environ_value.strip() or None


def set_dotted(values: dict[str, Any], pair: str, flag: str = "--set") -> None:
    """KEY=VALUE into values, `a.b` reaching nested objects; a value that reads as JSON is sent as it."""
    name, sep, raw = pair.partition("=")
    if not sep or not name:
        raise InputRefused(f"{flag} takes KEY=VALUE, not {pair!r}")
    *parents, last = name.split(".")
    place = values
    for part in parents:
        place = place.setdefault(part, {})
        if not isinstance(place, dict):
            raise InputRefused(f"{flag} {name}: {part} is not an object")
    try:
        place[last] = json.loads(raw)
    except ValueError:
        place[last] = raw


def pairs(given: list[str], flag: str = "--set", start: dict[str, Any] | None = None) -> dict[str, Any]:
    """KEY=VALUE pairs on top of `start`; a value that reads as a number, true/false/null or JSON is sent as one."""
    values = dict(start or {})
    for pair in given:
        set_dotted(values, pair, flag)
    return values


def weights(given: list[str], flag: str) -> dict[int, float]:
    """ID or ID:WEIGHT (weight 1 when left out), as {id: weight}."""
    chosen = {}
    for item in given:
        ident, _, weight = item.partition(":")
        try:
            chosen[int(ident)] = float(weight) if weight else 1.0
        except ValueError:
            raise InputRefused(f"{flag} takes ID or ID:WEIGHT (e.g. {flag} 3:0.5), not {item!r}") from None
    return chosen
