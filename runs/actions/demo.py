"""The one-click demo run: the default model on the built-in arithmetic generator, accuracy and
format rewards, the cpu-demo preset. Its dataset, rewards and config are made for the user the
first time and found by name after that. They are checked and completed as the API does it (the
dataset by runs.datasets, the rewards and config by the trainer's schemas), so they are what the
API would store for the same fields: tests/runs/test_demo_library.py compares."""
from dataclasses import dataclass

from django.db import IntegrityError, transaction

from runs.actions.lifecycle import start_run
from runs.config_values import complete_config
from runs.datasets.validation import generator_fields
from runs.models import Dataset, RewardFunction, Run, TrainingConfig
from worker.trainer.config import PRESETS
from worker.trainer.for_control_plane.rewards import BUILTINS

DEMO_DATASET = {
    # A new name, not new parameters under the old one: a library's "Demo: arithmetic" (no
    # examples) stays what its runs were trained and would be resumed on.
    "name": "Demo: arithmetic, one worked example", "source": "generator", "generator": "arithmetic",
    "prompt_column": "prompt",
    # One worked example before each problem: without it SmolLM2-135M ends 2% of its answers the
    # way the format reward asks, and a third of the runs never found the format (bench/README.md).
    "generator_params": {"count": 5000, "difficulty": 1, "seed": 0, "examples": 1},
}
DEMO_REWARDS = [  # (fields, weight): what bench/learning.py shows the cpu-demo preset learning on
    ({"name": "Demo: accuracy", "kind": "builtin", "builtin": "accuracy", "params": {"answer_column": "answer"},
      "description": "1 when the number after #### equals the answer."}, 1.0),
    ({"name": "Demo: format", "kind": "builtin", "builtin": "format", "params": {},
      "description": "1 when the completion ends with '#### <number>'."}, 1.0),
]
# The demo is judged on accuracy alone: format is what it is paid for on the way, not the task.
DEMO_EVAL_REWARDS = ["Demo: accuracy"]
DEMO_CONFIG = {"name": "Demo: CPU, evaluated", "preset": "cpu-demo",
               "description": "The cpu-demo preset: SmolLM2-135M, about 20 s a step on two cores."}


@dataclass
class DemoLibrary:
    dataset: Dataset
    rewards: list[tuple[RewardFunction, float]]
    config: TrainingConfig


# The inputs are fixed: a check that fails while making these is a bug, and raises.
def _new_dataset(user, fields: dict) -> Dataset:
    checked = generator_fields(fields["generator"], fields["generator_params"], fields["prompt_column"])
    return Dataset.objects.create(owner=user, **{**fields, **checked})


def _new_builtin_reward(user, fields: dict) -> RewardFunction:
    params = BUILTINS[fields["builtin"]].model_validate(fields["params"]).model_dump()
    return RewardFunction.objects.create(owner=user, **{**fields, "params": params})


def _new_config(user, fields: dict) -> TrainingConfig:
    return TrainingConfig.objects.create(owner=user, name=fields["name"], description=fields["description"],
                                         values=complete_config(PRESETS[fields["preset"]]))


def _owned_or_created(model, fields: dict, user, create):
    """The user's object of that name, or a new one from `create`."""
    found = model.objects.filter(owner=user, name=fields["name"]).first()
    return found if found is not None else create(user, fields)


def demo_library(user) -> DemoLibrary:
    return DemoLibrary(
        dataset=_owned_or_created(Dataset, DEMO_DATASET, user, _new_dataset),
        rewards=[(_owned_or_created(RewardFunction, fields, user, _new_builtin_reward), weight)
                 for fields, weight in DEMO_REWARDS],
        config=_owned_or_created(TrainingConfig, DEMO_CONFIG, user, _new_config),
    )


def _next_demo_name(user) -> str:
    return f"Demo run {Run.objects.filter(owner=user, name__startswith='Demo run').count() + 1}"


def start_demo_run(user) -> Run:
    """Creates (or reuses) the demo library, then creates and starts a demo run, all or nothing."""
    for attempt in range(2):
        try:
            with transaction.atomic():
                return _create_and_start(user)
        except IntegrityError:
            if attempt:  # a second click made the same library at the same moment; the retry finds it
                raise
    raise AssertionError("unreachable")


def _create_and_start(user) -> Run:
    library = demo_library(user)
    # A template found by name may predate knobs added since: completed again, as the API does.
    run = Run.objects.create(owner=user, name=_next_demo_name(user), dataset=library.dataset,
                             config_template=library.config, config=complete_config(library.config.values))
    for reward, weight in library.rewards:
        run.run_rewards.create(reward_function=reward, weight=weight)
        if reward.name in DEMO_EVAL_REWARDS:
            run.run_eval_rewards.create(reward_function=reward, weight=1.0)
    return start_run(run)
