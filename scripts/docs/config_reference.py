"""The training config's knobs, read from the one schema both sides share
(`worker.trainer.config.TrainingConfig`): name, default, limits and help, by the form's groups,
with the presets after them."""
import json
import typing

from scripts.docs.tables import prose, table

LIMITS = (("ge", "≥"), ("gt", ">"), ("le", "≤"), ("lt", "<"), ("min_length", "length ≥"))


def constraints_of(info) -> list:
    """The field's own constraints, and those inside its type's arms (`int | "auto"` keeps its
    bounds on the int arm)."""
    nested = [constraint for arm in typing.get_args(info.annotation)
              for meta in getattr(arm, "__metadata__", ()) for constraint in getattr(meta, "metadata", [meta])]
    return list(info.metadata) + nested


def limits_of(info) -> str:
    found = []
    for constraint in constraints_of(info):
        for attribute, sign in LIMITS:
            if getattr(constraint, attribute, None) is not None:
                found.append(f"{sign} {getattr(constraint, attribute)}")
    return ", ".join(found)


def shown(value) -> str:
    return f"`{json.dumps(value)}`"


def config_markdown() -> str:
    from worker.trainer.config import GROUPS, PRESETS, TrainingConfig, field_groups

    fields = TrainingConfig.model_fields
    parts = []
    for group, names in field_groups().items():
        rows = [[f"`{name}`", shown(fields[name].default), limits_of(fields[name]), prose(fields[name].description)]
                for name in names]
        parts.append(f"## {GROUPS[group]}\n\n" + table(["Knob", "Default", "Limits", "What it does"], rows))
    rows = [[f"`{name}`", ", ".join(f"`{knob}={json.dumps(value)}`" for knob, value in preset.items())]
            for name, preset in PRESETS.items()]
    parts.append("## Presets\n\nA preset sets these knobs; the rest keep their defaults.\n\n"
                 + table(["Preset", "Knobs"], rows))
    return "\n".join(parts)
