"""Each step's pipeline readings: the worker's window as metrics with the cap in force and the
staleness bound; with max_inflight_tasks: auto, the cap for the next step set on the worker; and
the step's turn, during which a paused server's polls are counted as paused."""
from contextlib import contextmanager

from worker.trainer.config import TrainingConfig
from worker.trainer.inference.time_slicing import GenerationPause
from worker.trainer.loop.pipeline import PipelineReadings, training_turn
from worker.trainer.rollout.gathering import Gathered
from worker.trainer.rollout.pipeline_window import PipelineWindow
from worker.trainer.rollout.staleness import StalenessPolicy

STALENESS = StalenessPolicy(max_staleness=4, groups_per_step=2)  # useful bound 8


class FakeRollouts:
    """The worker's side the readings use: a window to hand out, a cap to be set."""
    wave, scoring_threads = 1, 2

    def __init__(self, max_inflight: int, window: PipelineWindow, queue_depth: int = 0):
        self.max_inflight, self.window, self.queue_depth = max_inflight, window, queue_depth
        self.caps: list[int] = []
        self.events: list[str] = []

    def take_window(self) -> PipelineWindow:
        return self.window

    def set_max_inflight(self, cap: int) -> None:
        self.caps.append(cap)
        self.max_inflight = cap

    @contextmanager
    def generation_paused(self):
        self.events.append("counting paused")
        yield
        self.events.append("counting resumed")


# The cap held back 9 polls in 10; two groups took 3 s to generate and 1 s to score.
CAPPED = PipelineWindow(polls=10, held_by_inflight_cap=9, groups_finished=2, generation_s=6.0, scoring_s=2.0,
                        scoring_busy_s=2.0)


def starved_step() -> Gathered:
    return Gathered(groups=[object(), object()], waited_s=6.0)


def test_the_steps_metrics_name_the_cap_in_force_the_bound_and_the_workers_window():
    rollouts = FakeRollouts(max_inflight=64, window=CAPPED)
    metrics = PipelineReadings(rollouts, STALENESS, TrainingConfig()).after_step(starved_step(), step_s=10.0)
    assert metrics == {"async/max_inflight": 64.0, "async/ahead_bound": 8.0, "async/blocked_by_staleness": 0.0,
                       "async/blocked_by_inflight_cap": 0.9, "async/blocked_by_queue": 0.0,
                       "rollout/group_generation_s": 3.0, "rollout/group_scoring_s": 1.0}


def test_a_fixed_cap_is_never_changed():
    rollouts = FakeRollouts(max_inflight=2, window=CAPPED)
    PipelineReadings(rollouts, STALENESS, TrainingConfig(max_inflight_tasks=2)).after_step(starved_step(), 10.0)
    assert rollouts.caps == []


def test_auto_raises_a_cap_the_trainer_starved_behind_and_reports_the_one_in_force_during_the_step():
    rollouts = FakeRollouts(max_inflight=2, window=CAPPED)
    readings = PipelineReadings(rollouts, STALENESS, TrainingConfig(max_inflight_tasks="auto"))
    metrics = readings.after_step(starved_step(), step_s=10.0)
    # 2 groups in 4 s of training, 4 s a group: Little's law needs 2 in flight; the raise is by half.
    assert metrics["async/max_inflight"] == 2.0 and rollouts.caps == [3]
    # and reads how fast the worker's scoring threads get through groups: 2 threads, 1 s a group.
    assert readings.controller.scoring_threads == 2 and readings.controller.scoring_busy_s == 1.0


def test_auto_lowers_the_cap_after_groups_were_dropped_stale():
    rollouts = FakeRollouts(max_inflight=8, window=PipelineWindow(polls=10))
    readings = PipelineReadings(rollouts, STALENESS, TrainingConfig(max_inflight_tasks="auto"))
    readings.after_step(Gathered(groups=[object(), object()], dropped=[object()]), step_s=10.0)
    assert rollouts.caps == [6]


def test_waiting_for_an_expiring_group_is_not_starvation():
    rollouts = FakeRollouts(max_inflight=2, window=CAPPED)
    readings = PipelineReadings(rollouts, STALENESS, TrainingConfig(max_inflight_tasks="auto"))
    readings.after_step(Gathered(groups=[object(), object()], waited_s=6.0, waited_for_expiring_s=6.0), 10.0)
    assert rollouts.caps == [2]


class ServerPause:
    def __init__(self, events: list[str]):
        self.events = events

    @contextmanager
    def paused(self, mode: str):
        self.events.append("server paused")
        yield
        self.events.append("server resumed")


def test_where_they_take_turns_the_workers_polls_count_as_paused_for_all_of_the_servers_pause():
    rollouts = FakeRollouts(max_inflight=2, window=CAPPED)
    with training_turn(rollouts, GenerationPause(ServerPause(rollouts.events))):
        rollouts.events.append("trained")
    assert rollouts.events == ["counting paused", "server paused", "trained", "server resumed", "counting resumed"]


def test_where_generation_overlaps_the_step_no_poll_counts_as_paused():
    rollouts = FakeRollouts(max_inflight=2, window=CAPPED)
    with training_turn(rollouts, GenerationPause(None)):
        rollouts.events.append("trained")
    assert rollouts.events == ["trained"]
