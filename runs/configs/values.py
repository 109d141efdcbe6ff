"""Complete training config values: the one schema's defaults with layers on top (a preset,
a template's values, what a person typed), checked by the schema.

Config templates and runs store complete values, so a worker and a page read every knob
without knowing the defaults. The API reports a failure per field (errors_by_field).
"""
from worker.trainer.config import TrainingConfig as ConfigSchema


def complete_config(*layers: dict | None) -> dict:
    """Raises pydantic's ValidationError when the merged values break the schema."""
    merged: dict = {}
    for layer in layers:
        merged.update(layer or {})
    return ConfigSchema.model_validate(merged).model_dump(mode="json")
