"""Checks what a reward or an environment returned. Standard library only: the sandboxed process imports it too."""
import json
import math
import numbers


class ResultError(ValueError):
    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def check_value(index: int, value) -> float | None:
    if value is None:
        return None
    if type(value) is float and math.isfinite(value):  # the common case, without the ABC checks below
        return value
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ResultError("result_type", f"value {index} is {_shown(value)} ({type(value).__name__}); "
                                         "each value must be a number or None")
    try:
        number = float(value)
    except (OverflowError, ValueError, TypeError):
        number = math.inf
    if not math.isfinite(number):
        raise ResultError("result_value", f"value {index} is {_shown(value)}; each value must be a finite number "
                                          "(use None for 'not applicable')")
    return number


def check_values(values, count: int) -> list[float | None]:
    """One finite float or None per completion, or a ResultError that says what is wrong."""
    if isinstance(values, tuple):
        values = list(values)
    if not isinstance(values, list):
        raise ResultError("result_type", f"returned {type(values).__name__}; reward must return a list "
                                         "with one number or None per completion")
    if len(values) != count:
        raise ResultError("result_length", f"returned {len(values)} values for {count} completions")
    return [check_value(i, v) for i, v in enumerate(values)]


def check_reply(value):
    """An environment's answer as it will cross the pipe: strict JSON (what it means as messages
    is for the caller to read, worker/trainer/environments/replies.py)."""
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ResultError("reply_type", f"returned {_shown(value)}, which is not JSON ({exc}); answer None, "
                                        "text, a message dict or a list of them") from None
    return value


def check_tools(tools) -> list[dict]:
    """TOOLS as {name: description} or {name: {"description", "parameter", "parameter_description"}},
    made into one dict per tool (worker/trainer/environments/base.py Tool has the same fields)."""
    if not isinstance(tools, dict):
        raise ResultError("definition", f"TOOLS is {type(tools).__name__}; make it a dict of tool name → description")
    checked = []
    for name, about in tools.items():
        if not isinstance(name, str) or not name.isidentifier():
            raise ResultError("definition", f"TOOLS: {_shown(name)} is not a tool name (letters, digits, _)")
        if isinstance(about, str):
            about = {"description": about}
        if not isinstance(about, dict) or not all(isinstance(v, str) for v in about.values()) \
                or set(about) - set(TOOL_FIELDS):
            raise ResultError("definition", f"TOOLS[{name!r}] must be a description (text) or a dict with text "
                                            f"values among {', '.join(TOOL_FIELDS)}")
        checked.append({"name": name, "description": about.get("description", ""),
                        "parameter": about.get("parameter", "input"),
                        "parameter_description": about.get("parameter_description", "")})
    return checked


TOOL_FIELDS = ("description", "parameter", "parameter_description")
