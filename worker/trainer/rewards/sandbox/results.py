"""Checks what a reward returned. Standard library only: the sandboxed process imports it too."""
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
