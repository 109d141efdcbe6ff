"""The library a demo run is made from (runs/training_runs/demo_runs.py), one per definition in
runs/demos/definitions.py. A demo's dataset, rewards, environment (tool use: the built-in
calculator) and config are made for the user the first time and found by name after that. They are
checked and completed as the API does it (the dataset by runs.datasets, the rewards, the environment
and the config by the trainer's schemas), so they are what the API would store for the same fields:
tests/runs/demos/test_demo_library.py compares."""
from dataclasses import dataclass


from runs.configs.models import TrainingConfig
from runs.configs.values import complete_config
from runs.datasets.models import Dataset
from runs.datasets.validation import generator_fields
from runs.demos.definitions import ARITHMETIC, DEMOS
from runs.environments.models.environment import Environment, EnvironmentReward
from runs.rewards.models.function import RewardFunction
from worker.trainer.config import PRESETS
from worker.trainer.for_control_plane.environments import BUILTIN_ENVIRONMENTS
from worker.trainer.for_control_plane.rewards import BUILTINS

# Read by runs/demos/environment_library.py, whose environments are scored by the demo's accuracy.
DEMO_REWARDS = ARITHMETIC.rewards


@dataclass
class DemoLibrary:
    dataset: Dataset
    rewards: list[tuple[RewardFunction, float]]
    environment: Environment | None
    config: TrainingConfig


# The inputs are fixed: a check that fails while making these is a bug, and raises.
def _new_dataset(user, fields: dict) -> Dataset:
    checked = generator_fields(fields["generator"], fields["generator_params"], fields["prompt_column"])
    return Dataset.objects.create(owner=user, **{**fields, **checked})


def _new_builtin_reward(user, fields: dict) -> RewardFunction:
    params = BUILTINS[fields["builtin"]].model_validate(fields["params"]).model_dump()
    return RewardFunction.objects.create(owner=user, **{**fields, "params": params})


def _new_builtin_environment(user, fields: dict, dataset: Dataset,
                             rubric: list[tuple[RewardFunction, float]]) -> Environment:
    """As the API saves a built-in (EnvironmentSerializer): its params completed by the catalog's schema."""
    params = BUILTIN_ENVIRONMENTS[fields["builtin"]].model_validate(fields["params"]).model_dump()
    environment = Environment.objects.create(owner=user, dataset=dataset, **{**fields, "params": params})
    EnvironmentReward.objects.bulk_create([
        EnvironmentReward(environment=environment, reward_function=reward, weight=weight) for reward, weight in rubric])
    return environment


def _new_config(user, fields: dict) -> TrainingConfig:
    """As the API saves a config from a preset with values on top (TrainingConfigSerializer)."""
    values = complete_config(PRESETS[fields["preset"]], fields["overrides"])
    return TrainingConfig.objects.create(owner=user, name=fields["name"], description=fields["description"],
                                         values=values)


def _owned_or_created(model, fields: dict, user, create):
    """The user's object of that name, or a new one from `create`."""
    found = model.objects.filter(owner=user, name=fields["name"]).first()
    return found if found is not None else create(user, fields)


def demo_library(user, key: str) -> DemoLibrary:
    """The user's library for the demo `key` (a key of DEMOS; another raises KeyError)."""
    demo = DEMOS[key]
    dataset = _owned_or_created(Dataset, demo.dataset, user, _new_dataset)
    rewards = [(_owned_or_created(RewardFunction, fields, user, _new_builtin_reward), weight)
               for fields, weight in demo.rewards]
    environment = None if demo.environment is None else _owned_or_created(
        Environment, demo.environment, user,
        lambda owner, fields: _new_builtin_environment(owner, fields, dataset, rewards))
    return DemoLibrary(dataset=dataset, rewards=rewards, environment=environment,
                       config=_owned_or_created(TrainingConfig, demo.config, user, _new_config))
