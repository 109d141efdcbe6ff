"""The run's knobs as a diagnosis reads them: a knob missing from an older run's config has its
default, and the bounds the trainer derives from them are derived the same way here."""
from collections.abc import Mapping
from typing import Any

from worker.trainer.config import TrainingConfig


def setting(config: Mapping[str, Any], knob: str) -> Any:
    """The run's value of `knob`, or the schema's default where the config predates it."""
    if knob in config:
        return config[knob]
    field = TrainingConfig.model_fields.get(knob)
    return None if field is None else field.default


def groups_per_step(config: Mapping[str, Any]) -> int:
    batch = setting(config, "per_device_train_batch_size") * setting(config, "gradient_accumulation_steps")
    return max(1, batch // setting(config, "num_generations"))


def ahead_bound(config: Mapping[str, Any]) -> int:
    """Groups that may usefully be ahead of the trainer: worker/trainer/rollout/staleness.py's
    StalenessPolicy.useful_ahead (the trainer's own, out of the control plane's reach)."""
    per_step = groups_per_step(config)
    return max(per_step * setting(config, "weight_sync_steps") * setting(config, "max_staleness"), per_step)


def cores_needed(config: Mapping[str, Any]) -> int | None:
    """The cores a CPU machine needs for the config's cpu_sharing to start: split_cores (or auto,
    which splits on 2 cores or more) gives vLLM vllm_cpu_cores of them (half where empty) and must
    leave the trainer one (worker/trainer/inference/cpu_sharing.py's generation_cpus); None where
    the cores are not split."""
    if setting(config, "cpu_sharing") not in ("split_cores", "auto"):
        return None
    cores = setting(config, "vllm_cpu_cores")
    return cores + 1 if cores else 2
