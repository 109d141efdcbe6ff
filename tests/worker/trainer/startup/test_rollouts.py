"""The rollout worker's first in-flight cap: a fixed max_inflight_tasks as it is; auto starts at
one step's groups, within the staleness bound and the queue, and sizes scoring for its ceiling."""
import pytest

from worker.trainer.config import TrainingConfig
from worker.trainer.rollout.staleness import StalenessPolicy
from worker.trainer.startup.rollouts import inflight_cap_at_start

STALENESS = StalenessPolicy(max_staleness=4, groups_per_step=2)  # useful bound 8


@pytest.mark.parametrize(("knobs", "wave", "expected"), [
    ({"max_inflight_tasks": 64}, 1, (64, 8)),                         # fixed: as set; at most 8 ahead anyway
    ({"max_inflight_tasks": 3}, 1, (3, 3)),
    ({"max_inflight_tasks": "auto"}, 1, (2, 8)),                      # one step's groups; up to the bound
    ({"max_inflight_tasks": "auto", "queue_maxsize": 5}, 1, (2, 5)),  # the queue caps it too
    ({"max_inflight_tasks": "auto"}, 4, (4, 8)),                      # never below a wave
])
def test_the_first_cap_and_the_most_ever_in_flight(knobs, wave, expected):
    assert inflight_cap_at_start(TrainingConfig(**knobs), STALENESS, wave) == expected
