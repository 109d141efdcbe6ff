"""The one-click demo run: the default model on the built-in arithmetic generator, accuracy and
format rewards, the cpu-demo preset. Its dataset, rewards and config are made for the user the
first time (through the API's serializers, so they are exactly what the API would store) and
found by name after that."""
from dataclasses import dataclass
from types import SimpleNamespace

from django.db import IntegrityError, transaction

from runs.actions.lifecycle import start_run
from runs.api.serializers.configs import TrainingConfigSerializer
from runs.api.serializers.datasets import DatasetSerializer
from runs.api.serializers.rewards import RewardFunctionSerializer
from runs.api.serializers.runs import RunSerializer
from runs.models import Dataset, RewardFunction, Run, TrainingConfig

DEMO_DATASET = {
    # A new name, not new parameters under the old one: a library's "Demo: arithmetic" (no
    # examples) stays what its runs were trained and would be resumed on.
    "name": "Demo: arithmetic, one worked example", "source": "generator", "generator": "arithmetic",
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
DEMO_CONFIG = {"name": "Demo: CPU", "preset": "cpu-demo",
               "description": "The cpu-demo preset: SmolLM2-135M, about 20 s a step on two cores."}


@dataclass
class DemoLibrary:
    dataset: Dataset
    rewards: list[tuple[RewardFunction, float]]
    config: TrainingConfig


def _owned_or_created(model, serializer_class, fields: dict, user):
    """The user's object of that name, or a new one saved through the API's serializer."""
    found = model.objects.filter(owner=user, name=fields["name"]).first()
    if found is not None:
        return found
    serializer = serializer_class(data=fields, context={"request": SimpleNamespace(user=user)})
    serializer.is_valid(raise_exception=True)  # fixed inputs: a failure here is a bug, not user input
    return serializer.save(owner=user)


def demo_library(user) -> DemoLibrary:
    return DemoLibrary(
        dataset=_owned_or_created(Dataset, DatasetSerializer, DEMO_DATASET, user),
        rewards=[(_owned_or_created(RewardFunction, RewardFunctionSerializer, fields, user), weight)
                 for fields, weight in DEMO_REWARDS],
        config=_owned_or_created(TrainingConfig, TrainingConfigSerializer, DEMO_CONFIG, user),
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
    serializer = RunSerializer(data={
        "name": _next_demo_name(user), "dataset": library.dataset.pk, "config_template": library.config.pk,
        "rewards": [{"reward_function": reward.pk, "weight": weight} for reward, weight in library.rewards],
    }, context={"request": SimpleNamespace(user=user)})
    serializer.is_valid(raise_exception=True)
    return start_run(serializer.save(owner=user))
