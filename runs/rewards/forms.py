"""Reward forms: the built-ins' parameter fields come from the catalog's pydantic models, so a new
built-in or parameter shows up on the page without template changes. Saving goes through the
API's RewardFunctionSerializer: the page and the API accept and refuse the same things. The
environment pages build their built-ins' forms here too, from their own catalog. Judges' and reward
models' forms come from their schemas the same way (below)."""
import re
import types
import typing

from pydantic import BaseModel
from pydantic.fields import PydanticUndefined

from runs.rewards.model_rewards import SCHEMAS
from worker.trainer.for_control_plane.rewards import BUILTINS

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
    params: dict[str, typing.Any] = {}
    errors: dict[str, list[str]] = {}
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
    by_field: dict[str, list[str]] = {}
    other: list[str] = []
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


# --- judges and reward models ---------------------------------------------------------------------
# Their forms come from the schemas the API checks them by (runs/rewards/model_rewards.py: SCHEMAS,
# kind → its parameters' schema), with what a flat built-in lacks: choices (a Literal), multi-line text
# (the template), a label → value table, and nested limits, whose inputs are named by their path
# ("limits.timeout_s").
MULTILINE = {"template", "system_prompt"}
# Fields shown only while another field has a value (the page's script hides the rest; all are sent).
SHOWN_WHEN = {"scale_min": "mode=score", "scale_max": "mode=score", "labels": "mode=choice",
              "base_url": "endpoint=url"}
PLACEHOLDER_HELP = ("Placeholders: {prompt}; {completion} (score, choice) or {completions} (rank: the group, "
                    "numbered from 1); any column of the run's dataset by its name, e.g. {answer}. "
                    "Write {{ and }} for literal braces.")


def _model_kind(annotation) -> tuple[str, list[str]]:
    """The input a schema field gets, and its choices (for a select)."""
    if typing.get_origin(annotation) is typing.Literal:
        return "select", [str(choice) for choice in typing.get_args(annotation)]
    if typing.get_origin(annotation) is dict:
        return "labels", []
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "group", []
    return _kind_of(annotation)[0], []


def labels_text(labels: dict) -> str:
    return "\n".join(f"{label} = {value:g}" for label, value in (labels or {}).items())


def parse_labels(text: str) -> dict[str, float]:
    """'label = value' a line; ValueError naming the line it cannot read."""
    labels = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        label, equals, value = line.rpartition("=")
        if not equals or not label.strip():
            raise ValueError(f"line {number} ({line.strip()!r}): write each label as `label = reward`, e.g. `yes = 1`")
        try:
            labels[label.strip()] = float(value)
        except ValueError:
            raise ValueError(f"line {number}: {value.strip()!r} is not a number") from None
    return labels


def _shown_value(kind: str, value) -> str | bool:
    if kind == "checkbox":
        return bool(value)
    if kind == "labels":
        return labels_text(value)
    return "" if value is None else (f"{value:g}" if isinstance(value, float) else str(value))


def model_param_fields(schema, values: dict, errors: dict, prefix: str = "") -> list[dict]:
    """One entry per field of `schema` (nested models as a group of their own fields), for the form."""
    fields = []
    for name, info in schema.model_fields.items():
        path = prefix + name
        kind, choices = _model_kind(info.annotation)
        default, value = _default(info), (values or {}).get(name)
        if kind == "group":
            fields.append({"name": path, "kind": "group", "help": info.description or "",
                           "fields": model_param_fields(info.annotation, value or {}, errors, path + ".")})
            continue
        if kind == "text" and name in MULTILINE:
            kind = "textarea"
        shown = _shown_value(kind, default if value is None else value)
        help_text = PLACEHOLDER_HELP if name == "template" else (info.description or "")
        fields.append({
            "name": path, "input": f"p-{path}", "id": "p-" + path.replace(".", "-"), "kind": kind,
            "choices": choices, "value": shown, "help": help_text, "errors": errors.get(path, []),
            "default": "" if kind in ("textarea", "labels") or default is None else _shown_value(kind, default),
            "required": default is None, "shown_when": SHOWN_WHEN.get(path, ""),
        })
    return fields


def _flat(fields: list[dict]) -> list[dict]:
    return [leaf for field in fields for leaf in (_flat(field["fields"]) if field["kind"] == "group" else [field])]


def model_params_from_form(kind: str, form) -> tuple[dict, dict]:
    """A judge's or a reward model's parameters from the posted form (nested by path), and per-field
    input errors (a number that is not one, a label line unreadable)."""
    params: dict[str, typing.Any] = {}
    errors: dict[str, list[str]] = {}
    for field in _flat(model_param_fields(SCHEMAS[kind], {}, {})):
        raw = form.get(field["input"], "")
        *parents, name = field["name"].split(".")
        target = params
        for parent in parents:
            target = target.setdefault(parent, {})
        if field["kind"] == "checkbox":
            target[name] = raw in ("on", "true", "1")
            continue
        text = raw if field["kind"] == "textarea" else raw.strip()
        if text == "":
            continue  # left empty: the schema's default applies (or its refusal, for what it requires)
        try:
            if field["kind"] == "labels":
                target[name] = parse_labels(text)
            elif field["kind"] == "integer":
                target[name] = int(text)
            elif field["kind"] == "number":
                target[name] = float(text)
            else:
                target[name] = text.replace("\r\n", "\n")
        except ValueError as exc:
            errors[field["name"]] = [str(exc) if field["kind"] == "labels" else
                                     f"{text!r} is not a{'n integer' if field['kind'] == 'integer' else ' number'}"]
    return params, errors


def model_param_errors(messages: list[str], kind: str) -> tuple[dict, list[str]]:
    """The serializer's 'path: problem' messages by field path (limits.timeout_s too), and the rest."""
    known = {field["name"] for field in _flat(model_param_fields(SCHEMAS[kind], {}, {}))}
    by_field: dict[str, list[str]] = {}
    other: list[str] = []
    for message in messages:
        path, _, problem = str(message).partition(": ")
        if problem and path in known:
            by_field.setdefault(path, []).append(problem)
        else:
            other.append(str(message))
    return by_field, other
