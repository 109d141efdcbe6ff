"""The training config, the schema both sides share: `from worker.trainer.config import ...`.

schema.py: the fields and what validation refuses (TrainingConfig); layout.py: what the GPU
knobs add up to, over processes and machines; legacy.py: older configs translated before
validation; presets.py: named starting points. Import a module of this package by its own name
inside the package (an import of the package from one of them would be a circle).
"""
from worker.trainer.config.layout import impossible_setting
from worker.trainer.config.presets import CPU_DEMO, PRESETS
from worker.trainer.config.schema import (ALARMS, DEFAULT_MODEL, GROUPS, MAX_INFLIGHT_TASKS, InflightCap, Switch,
                                          TrainingConfig, errors_by_field, field_groups, knob, switched_on,
                                          translated_sample_knobs)

__all__ = ["ALARMS", "CPU_DEMO", "DEFAULT_MODEL", "GROUPS", "MAX_INFLIGHT_TASKS", "PRESETS", "InflightCap", "Switch",
           "TrainingConfig", "errors_by_field", "field_groups", "impossible_setting", "knob", "switched_on",
           "translated_sample_knobs"]
