"""Runs for the comparison tests: `make_run(name, **knobs)`; their metric points come from
tests.support.telemetry.add_points."""
import pytest

from runs.training_runs.models import Run, RunReward
from worker.trainer.config import TrainingConfig as ConfigSchema


@pytest.fixture
def make_run(owner, dataset, reward):
    def make(name: str, **knobs) -> Run:
        made = Run.objects.create(owner=owner, name=name, dataset=dataset,
                                  config=ConfigSchema(**knobs).model_dump())
        RunReward.objects.create(run=made, reward_function=reward, weight=1.0)
        return made

    return make
