"""The alarm knobs of a run's config (worker.trainer.config, group "alarms"), with the schema's
defaults for any a config lacks: a run's config is complete when it is created, but the check
must not fail an ingest because an older run predates a knob."""
from dataclasses import dataclass

from worker.trainer.config import TrainingConfig

THRESHOLDS = ("alarm_entropy_min", "alarm_kl_to_sampler_max", "alarm_importance_ratio_max",
              "alarm_equal_rewards_max", "alarm_truncated_max", "alarm_eval_drop", "alarm_judge_disagreement_max")


def _knob(config: dict, name: str):
    return config.get(name, TrainingConfig.model_fields[name].default)


@dataclass(frozen=True)
class AlarmSettings:
    thresholds: dict[str, float]
    patience: int
    stop_on: frozenset[str]

    @classmethod
    def of(cls, config: dict) -> "AlarmSettings":
        stop_on = str(_knob(config, "alarm_stop_on"))
        return cls(thresholds={name: float(_knob(config, name)) for name in THRESHOLDS},
                   patience=int(_knob(config, "alarm_patience")),
                   stop_on=frozenset(name.strip() for name in stop_on.split(",") if name.strip()))
