"""Reward forms: the built-ins' parameter fields come from the catalog's pydantic models, so a new
built-in or parameter shows up on the page without template changes. Saving goes through the
API's RewardFunctionSerializer: the page and the API accept and refuse the same things. The
environment pages build their built-ins' forms here too, from their own catalog."""
import re
import types
import typing

from pydantic.fields import PydanticUndefined

from worker.trainer.rewards.catalog import BUILTINS

LINE = re.compile(r"^line (\d+)\b")
STARTER_SOURCE = '''def reward(prompts, completions, **columns):
    """One score per completion: a number, or None where this reward does not apply.

    prompts and completions are lists of text; columns holds the dataset's other
    columns (e.g. columns["answer"]), one value per completion.
    """
    answers = columns.get("answer", [""] * len(completions))
    return [1.0 if str(answer).split("####")[-1].strip() in completion else 0.0
            for completion, answer in zip(completions, answers)]
'''


def _kind_of(annotation) -> tuple[str, bool]:
    """('checkbox' | 'integer' | 'number' | 'list' | 'text', optional) for a parameter's type."""
    args = typing.get_args(annotation)
    optional = typing.get_origin(annotation) in (typing.Union, types.UnionType) and type(None) in args
    if optional:
        annotation = next(a for a in args if a is not type(None))
    if annotation is bool:
        return "checkbox", optional
    if annotation is int:
        return "integer", optional
    if annotation is float:
        return "number", optional
    if typing.get_origin(annotation) is list:
        return "list", optional
    return "text", optional


def _default(info):
    if info.default is not PydanticUndefined:
        return info.default
    return info.default_factory() if info.default_factory else None


def _shown(kind: str, value) -> str:
    if kind == "list":
        return ", ".join(map(str, value or []))
    return "" if value is None else str(value)


def param_fields(builtin: str, values: dict, errors: dict, catalog=BUILTINS) -> list[dict]:
    fields = []
    for name, info in catalog[builtin].model_fields.items():
        kind, optional = _kind_of(info.annotation)
        default = _default(info)
        value = values.get(name, default)
        fields.append({
            "name": name, "input": f"{builtin}-{name}", "kind": kind, "optional": optional,
            "value": bool(value) if kind == "checkbox" else _shown(kind, value),
            "default": _shown(kind, default) if kind != "checkbox" else ("on" if default else "off"),
            "help": info.description or "", "errors": errors.get(name, []),
        })
    return fields


def builtin_choices(selected: str, params: dict, errors: dict, catalog=BUILTINS, docs=None) -> list[dict]:
    """Every built-in with its fields; only the selected one keeps the stored values and errors."""
    return [{"name": name, "doc": (docs or {}).get(name) or (model.__doc__ or "").strip(), "selected": name == selected,
             "fields": param_fields(name, params if name == selected else {}, errors if name == selected else {},
                                    catalog)}
            for name, model in catalog.items()]


def params_from_form(builtin: str, form, catalog=BUILTINS) -> tuple[dict, dict]:
    """The selected built-in's parameters from the posted form, and per-field input errors."""
    params, errors = {}, {}
    for field in param_fields(builtin, {}, {}, catalog):
        raw = form.get(field["input"], "")
        if field["kind"] == "checkbox":
            params[field["name"]] = raw in ("on", "true", "1")
            continue
        raw = raw.strip()
        if raw == "":
            if field["optional"]:
                params[field["name"]] = None
            continue  # left empty: the catalog's default applies
        elif field["kind"] == "list":
            params[field["name"]] = [part.strip() for part in raw.split(",") if part.strip()]
        elif field["kind"] in ("integer", "number"):
            try:
                params[field["name"]] = int(raw) if field["kind"] == "integer" else float(raw)
            except ValueError:
                errors[field["name"]] = [f"{raw!r} is not a{'n integer' if field['kind'] == 'integer' else ' number'}"]
        else:
            params[field["name"]] = raw
    return params, errors


def param_errors(messages: list[str]) -> tuple[dict, list[str]]:
    """The serializer's 'name: problem' messages by parameter, and those naming none."""
    by_field, other = {}, []
    for message in messages:
        name, _, problem = str(message).partition(": ")
        if problem and "." not in name and " " not in name:
            by_field.setdefault(name.split(".")[0], []).append(problem)
        else:
            other.append(str(message))
    return by_field, other


def error_lines(messages: list[str]) -> list[int]:
    """Line numbers the source errors point at, for the editor to highlight."""
    return sorted({int(m.group(1)) for m in (LINE.match(str(message)) for message in messages) if m})
