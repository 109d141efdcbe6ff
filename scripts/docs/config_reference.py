"""The training config's knobs, read from the one schema both sides share
(`worker.trainer.config.TrainingConfig`): name, default, limits and help, by the form's groups,
with the presets after them."""
import json

from scripts.docs.tables import prose, table

LIMITS = (("ge", "≥"), ("gt", ">"), ("le", "≤"), ("lt", "<"), ("min_length", "length ≥"))


def limits_of(info) -> str:
    found = []
    for constraint in info.metadata:
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
