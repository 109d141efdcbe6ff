"""Configs written before a knob was renamed or changed meaning, translated before validation, so
that stored configs and the frozen launch specs of older runs keep working.

Nothing here knows the schema: `fields` (the schema's model_fields) gives the defaults a
translation needs, so that the schema can call this module and not the other way round.
"""
from collections.abc import Mapping
from typing import Any

# pause_generation_while_training (auto/on/off), which cpu_sharing replaced.
LEGACY_PAUSE_SETTING = {"on": "take_turns", "off": "overlap", "auto": "auto"}


def translated(data, fields: Mapping[str, Any]):
    """`data` with every older knob put as today's schema says it."""
    if isinstance(data, dict) and "pause_generation_while_training" in data:
        data = dict(data)
        legacy = data.pop("pause_generation_while_training")
        data.setdefault("cpu_sharing", LEGACY_PAUSE_SETTING.get(legacy, legacy))
    return translated_sample_knobs(data, fields)


def translated_sample_knobs(data, fields: Mapping[str, Any]):
    """Configs saved before samples_groups_per_step sent num_completions_to_log groups (0: none)
    on each logging step: they keep doing so, stored configs and frozen launch specs alike."""
    if not isinstance(data, dict) or "num_completions_to_log" not in data:
        return data
    data = dict(data)
    groups = data.pop("num_completions_to_log")
    if not isinstance(groups, int):
        data.setdefault("samples_groups_per_step", groups)  # refused there, by its new name
    elif groups == 0:
        data.setdefault("log_completions", False)
    elif groups < _groups_a_step(data, fields):  # more than a step had sent them all
        data.setdefault("samples_groups_per_step", groups)
    data.setdefault("samples_every_steps", data.get("logging_steps", 1))
    return data


def _groups_a_step(data: dict, fields: Mapping[str, Any]) -> int:
    value = {name: data.get(name, fields[name].default)
             for name in ("per_device_train_batch_size", "gradient_accumulation_steps", "num_generations")}
    try:
        return value["per_device_train_batch_size"] * value["gradient_accumulation_steps"] // value["num_generations"]
    except (TypeError, ZeroDivisionError):
        return 0  # the batch knobs are refused on their own
