"""The built-in environments, made for a user on demand (the environments page's one click), like
the demo library (library.py): on the arithmetic generator at difficulty 3, scored by accuracy. Each
is found by name once made, so a second click changes nothing."""
from django.db import transaction

from runs.datasets.models import Dataset
from runs.demos.library import DEMO_REWARDS, _new_builtin_reward, _new_dataset, _owned_or_created
from runs.environments.models.environment import Environment, EnvironmentReward
from runs.rewards.models.function import RewardFunction
from worker.trainer.for_control_plane.environments import BUILTIN_ENVIRONMENTS

ENVIRONMENT_DATASET = {
    "name": "Environments: arithmetic, difficulty 3", "source": "generator", "generator": "arithmetic",
    "prompt_column": "prompt",
    # Three numbers up to 1,000 with * among the operators: hard enough that a calculator helps.
    "generator_params": {"count": 5000, "difficulty": 3, "seed": 0, "examples": 0},
}
ACCURACY = DEMO_REWARDS[0][0]  # "Demo: accuracy": 1 when the number after #### is the answer
BUILTIN_LIBRARY = [
    {"name": "Calculator: arithmetic", "builtin": "calculator", "params": {},
     "description": "The model may call calculate(expression) before it answers; rewarded for a right final answer."},
    {"name": "Feedback: arithmetic", "builtin": "feedback", "params": {},
     "description": "A wrong answer is told too high, too low or not an integer, and the model tries again."},
]


def _new_environment(user, fields: dict, dataset: Dataset, reward: RewardFunction) -> Environment:
    params = BUILTIN_ENVIRONMENTS[fields["builtin"]].model_validate(fields["params"]).model_dump()
    environment = Environment.objects.create(owner=user, kind=Environment.Kind.BUILTIN, dataset=dataset,
                                             **{**fields, "params": params})
    EnvironmentReward.objects.create(environment=environment, reward_function=reward, weight=1.0)
    return environment


@transaction.atomic
def builtin_environments(user) -> list[Environment]:
    dataset = _owned_or_created(Dataset, ENVIRONMENT_DATASET, user, _new_dataset)
    reward = _owned_or_created(RewardFunction, ACCURACY, user, _new_builtin_reward)
    return [_owned_or_created(Environment, fields, user,
                              lambda owner, made: _new_environment(owner, made, dataset, reward))
            for fields in BUILTIN_LIBRARY]
