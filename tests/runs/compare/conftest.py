"""Runs with metric points for the comparison tests: `make_run(name, config=...)`,
`add_points(run, name, steps, value)`."""
import datetime

import pytest

from runs.models import MetricPoint, Run, RunReward
from worker.trainer.config import TrainingConfig as ConfigSchema

T0 = datetime.datetime(2025, 1, 1, tzinfo=datetime.timezone.utc)


@pytest.fixture
def make_run(owner, dataset, reward):
    def make(name: str, **knobs) -> Run:
        made = Run.objects.create(owner=owner, name=name, dataset=dataset,
                                  config=ConfigSchema(**knobs).model_dump())
        RunReward.objects.create(run=made, reward_function=reward, weight=1.0)
        return made

    return make


def add_points(run, name, steps, value=float, seconds_per_step=10.0):
    MetricPoint.objects.bulk_create(
        [MetricPoint(run=run, name=name, step=s, value=value(s),
                     time=T0 + datetime.timedelta(seconds=s * seconds_per_step)) for s in steps],
        batch_size=5000)
