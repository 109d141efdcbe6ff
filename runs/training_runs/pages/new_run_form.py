"""The new-run form's data: what was entered, the payload it makes for the API's RunSerializer,
and the serializer's errors put back next to the inputs they are about.

The page validates with the API's own serializer, so a run the page accepts is exactly a run
the API would accept.
"""
from dataclasses import dataclass, field

from django.utils import timezone

from runs.configs.form_fields import config_field_groups, config_values_from_form, unplaced_errors
from worker.trainer.config import DEFAULT_MODEL
from worker.trainer.config import TrainingConfig as ConfigSchema

# These two knobs have their own inputs at the top of the form, not in the inline editor.
TOP_KNOBS = ("model", "worker_pool")


@dataclass
class Entered:
    """The form as typed: strings, so that a refused value is shown back unchanged."""

    name: str = ""
    environment: str = ""  # an environment brings its dataset and rubric: those may then be left empty
    dataset: str = ""
    weights: dict[str, str] = field(default_factory=dict)  # ticked reward id -> weight as typed
    eval_dataset: str = ""
    eval_weights: dict[str, str] = field(default_factory=dict)  # ticked evaluation reward id -> weight
    config_template: str = ""
    edit_config: bool = False
    config_values: dict = field(default_factory=dict)  # what the inline editor holds
    model: str = DEFAULT_MODEL
    worker_pool: str = "default"


def entered_from_post(data) -> Entered:
    ticked = [value for value in data.getlist("reward") if value.strip()]
    judges = [value for value in data.getlist("eval_reward") if value.strip()]
    return Entered(
        name=data.get("name", "").strip(),
        environment=data.get("environment", "").strip(),
        dataset=data.get("dataset", "").strip(),
        weights={reward_id: data.get(f"weight-{reward_id}", "1").strip() for reward_id in ticked},
        eval_dataset=data.get("eval_dataset", "").strip(),
        eval_weights={reward_id: data.get(f"eval-weight-{reward_id}", "1").strip() for reward_id in judges},
        config_template=data.get("config_template", "").strip(),
        edit_config=data.get("edit_config") == "on",
        config_values=_without_top_knobs(config_values_from_form(data)),
        model=data.get("model", "").strip(),
        worker_pool=data.get("worker_pool", "").strip(),
    )


def entered_from_run(run) -> Entered:
    """A new run's form filled from an existing run ("new run from these settings")."""
    return Entered(
        name=f"{run.name} (copy)"[:200], environment=str(run.environment_id or ""), dataset=str(run.dataset_id),
        weights={str(rr.reward_function_id): f"{rr.weight:g}" for rr in run.run_rewards.all()},
        eval_dataset=str(run.eval_dataset_id or ""),
        eval_weights={str(rr.reward_function_id): f"{rr.weight:g}" for rr in run.run_eval_rewards.all()},
        config_template=str(run.config_template_id or ""), edit_config=True,
        config_values=_without_top_knobs(run.config),
        model=run.config.get("model", DEFAULT_MODEL), worker_pool=run.config.get("worker_pool", "default"),
    )


def _without_top_knobs(values: dict) -> dict:
    return {name: value for name, value in values.items() if name not in TOP_KNOBS}


def default_run_name() -> str:
    return f"run {timezone.localtime():%Y-%m-%d %H:%M}"


def serializer_payload(entered: Entered) -> dict:
    """What RunSerializer validates: config = the inline edits (if any) plus model and pool."""
    overrides = dict(entered.config_values) if entered.edit_config else {}
    overrides.update(model=entered.model, worker_pool=entered.worker_pool)
    return {
        "name": entered.name or default_run_name(),
        "environment": entered.environment or None,
        "dataset": entered.dataset or None,
        "rewards": [{"reward_function": reward_id, "weight": weight} for reward_id, weight in entered.weights.items()],
        "eval_dataset": entered.eval_dataset or None,
        "eval_rewards": [{"reward_function": reward_id, "weight": weight}
                         for reward_id, weight in entered.eval_weights.items()],
        "config_template": entered.config_template or None,
        "config": overrides,
    }


@dataclass
class PlacedErrors:
    """Serializer errors by where the form shows them."""

    top: dict[str, list[str]] = field(default_factory=dict)  # name, dataset, eval_dataset, config_template, ...
    rewards: list[str] = field(default_factory=list)  # about the list as a whole
    eval_rewards: list[str] = field(default_factory=list)
    weights: dict[str, list[str]] = field(default_factory=dict)  # reward id -> messages
    config: dict[str, list[str]] = field(default_factory=dict)  # knob -> messages (the inline editor)
    general: list[str] = field(default_factory=list)

    @property
    def count(self) -> int:
        return (sum(map(len, self.top.values())) + len(self.rewards) + len(self.eval_rewards)
                + sum(map(len, self.weights.values()))
                + sum(map(len, self.config.values())) + len(self.general))


def _texts(messages) -> list[str]:
    if isinstance(messages, dict):
        return [f"{key}: {text}" for key, value in messages.items() for text in _texts(value)]
    if isinstance(messages, (list, tuple)):
        return [text for message in messages for text in _texts(message)]
    return [str(messages)]


def place_errors(errors: dict, entered: Entered) -> PlacedErrors:
    placed = PlacedErrors()
    for key in ("name", "environment", "dataset", "eval_dataset", "config_template"):
        if key in errors:
            placed.top[key] = _texts(errors[key])
    _place_reward_errors(errors.get("rewards"), list(entered.weights), placed)
    if errors.get("eval_rewards"):
        placed.eval_rewards = _texts(errors["eval_rewards"])
    config_errors = errors.get("config") or {}
    if not isinstance(config_errors, dict):
        config_errors = {"non_field_errors": config_errors}
    for knob, messages in config_errors.items():
        if knob in TOP_KNOBS:
            placed.top[knob] = _texts(messages)
        elif knob in ConfigSchema.model_fields:
            placed.config[knob] = _texts(messages)
    placed.general += unplaced_errors({k: _texts(v) for k, v in config_errors.items()})
    placed.general += _texts(errors.get("non_field_errors", []))
    return placed


def _place_reward_errors(reward_errors, reward_ids: list[str], placed: PlacedErrors) -> None:
    if not reward_errors:
        return
    if isinstance(reward_errors, dict):  # DRF's ListSerializer: {index: {field: [...]}}
        reward_errors = [reward_errors.get(i, {}) for i in range(len(reward_ids))]
    if all(isinstance(item, dict) for item in reward_errors) and len(reward_errors) == len(reward_ids):
        for reward_id, item in zip(reward_ids, reward_errors):
            if item.get("weight"):
                placed.weights[reward_id] = [f"weight: {text}" for text in _texts(item["weight"])]
            if item.get("reward_function"):
                placed.rewards.append(f"reward function {reward_id}: {' '.join(_texts(item['reward_function']))}")
    else:
        placed.rewards += _texts(reward_errors)


def editor_groups(entered: Entered, template_values: dict | None, errors: PlacedErrors | None):
    """The inline config editor's fields: the entered values, else the chosen config's, else the defaults."""
    values = entered.config_values if entered.config_values else (template_values or {})
    groups = config_field_groups(values, errors.config if errors else None)
    return [group for group in groups if group.key != "model"]  # model and pool sit at the top
