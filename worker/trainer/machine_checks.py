"""A training config checked against what this machine holds: the model's config.json (is its
family one the trainer reproduces?) and, for a LoRA run, its layers (do the targets and the rank
fit?).

These checks are kept out of TrainingConfig's validation so that a config validates the same on
every machine. Each side calls them where the answer matters: the control plane's serializers
when a config or a run is saved (where the model is on that machine), and the worker before it
starts the trainer (where the model must be).
"""
from pathlib import Path

from worker.trainer.models.families import local_model_problem
from worker.trainer.models.paths import ModelNotFoundError, ModelRefused, is_model_dir, resolve_model_path

Problem = tuple[str, str]  # (the config field to change, why)


def problems_here(config, *, model_must_be_here: bool = False) -> list[Problem]:
    """What this machine finds wrong with `config` (a TrainingConfig), by field; empty when
    nothing. A hub id not downloaded here passes (it is fetched where the run loads it), and so
    does a local path that is not here unless `model_must_be_here` (the worker's case). A path
    the operator does not allow is not this check's: models.paths.model_problem refuses it."""
    try:
        local = Path(resolve_model_path(config.model))
    except ModelNotFoundError as exc:
        return [("model", f"{exc} on this machine")] if model_must_be_here else []
    except ModelRefused:
        return []
    if not is_model_dir(local):
        return []
    if problem := local_model_problem(config.model):
        return [("model", problem)]  # its layers are not worth reading
    if config.lora and (problem := lora_problem(str(local), config)):
        return [(problem.field, str(problem))]
    return []


def lora_problem(local: str, config):
    """The LoRA settings against the model's layers, built without weights; None where the
    trainer stack (torch, transformers) is not installed here: the worker checks then."""
    try:
        from worker.trainer.training.lora import local_settings_problem
    except ImportError:
        return None
    return local_settings_problem(local, config.lora_targets, config.lora_r)
