"""What a run was configured with, as one nested dict a config diff can compare: the dataset,
the reward functions with their weights, and every knob of the trainer's config (model
included), with the schema's defaults filled in so that an unset knob compares as its value."""
from runs.datasets.launch_spec import dataset_spec
from worker.trainer.config import GROUPS, TrainingConfig, field_groups

_KNOB_GROUPS = {name: GROUPS[group] for group, names in field_groups().items() for name in names}
_DEFAULTS = {name: info.default for name, info in TrainingConfig.model_fields.items()}


def run_settings(run) -> dict:
    return {"dataset": _dataset_settings(run.dataset), "rewards": _reward_settings(run), "config": _knobs(run.config)}


def _dataset_settings(dataset) -> dict:
    spec = dataset_spec(dataset)
    # An upload's path on disk and its digest say nothing a person compares; its name does.
    for where in ("path", "sha256", "size_bytes"):
        spec.pop(where, None)
    return {"name": dataset.name, **spec, "prompt_format": dataset.prompt_format}


def _reward_settings(run) -> dict:
    rewards = {}
    for run_reward in run.run_rewards.all():
        function = run_reward.reward_function
        spec = function.launch_spec(run_reward.weight)
        rewards[spec.pop("name")] = {key: value for key, value in spec.items() if value is not None}
    return rewards


def _knobs(config: dict) -> dict:
    # Schema order first (it is grouped by concern); knobs only older runs have come last.
    return {**_DEFAULTS, **config}


def field_group(field: str) -> str:
    """The heading a flattened field is listed under: Dataset, Rewards, or the knob's group."""
    area, _, rest = field.partition(".")
    if area == "config":
        return _KNOB_GROUPS.get(rest.split(".")[0], "Other")
    return {"dataset": "Dataset", "rewards": "Rewards"}.get(area, "Other")
