"""Which settings differ between runs: flatten each run's settings into dotted fields, then
split the fields into those that differ and those that are equal everywhere.

Pure functions over dicts (no Django), so notebooks and tests use them as they are.
"""
from typing import Any

# A field one run has and another lacks differs; the lacking run has no entry in `values`.
_ABSENT = object()


def flatten(settings: dict, prefix: str = "") -> dict[str, Any]:
    """{"a": {"b": 1}, "c": [1, 2]} → {"a.b": 1, "c": [1, 2]}; lists stay whole values.

    An empty dict stays a value too, so that "no params" still differs from "some params".
    """
    flat: dict[str, Any] = {}
    for key, value in settings.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            flat.update(flatten(value, path + "."))
        else:
            flat[path] = value
    return flat


def config_diff(settings_by_run: dict[Any, dict]) -> dict[str, list[dict]]:
    """Splits runs' nested settings into differing and equal fields, in first-seen order.

    Returns {"differing": [{"field", "values": {run: value}}], "equal": [{"field", "value"}]}.
    A run that lacks a field is left out of that field's `values`.
    """
    flat_by_run = {run: flatten(settings) for run, settings in settings_by_run.items()}
    differing, equal = [], []
    for field in _fields_in_order(flat_by_run.values()):
        values = {run: flat.get(field, _ABSENT) for run, flat in flat_by_run.items()}
        if _all_equal(list(values.values())):
            equal.append({"field": field, "value": next(iter(values.values()))})
        else:
            differing.append({"field": field,
                              "values": {run: value for run, value in values.items() if value is not _ABSENT}})
    return {"differing": differing, "equal": equal}


def _fields_in_order(flats) -> list[str]:
    seen: dict[str, None] = {}
    for flat in flats:
        seen.update(dict.fromkeys(flat))
    return list(seen)


def _all_equal(values: list) -> bool:
    first = values[0]
    # 1 and 1.0 are the same setting; True and 1 are not (a bool knob is not a count).
    return all(_same(first, value) for value in values[1:])


def _same(a, b) -> bool:
    if a is _ABSENT or b is _ABSENT:
        return a is b
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    return a == b
