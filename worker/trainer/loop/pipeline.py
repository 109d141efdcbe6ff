"""The rollout pipeline as each step sees it: what held generation back and how long groups
took since the step before (rollout/pipeline_window.py), the in-flight cap in force and the
staleness bound, as the step's metrics; and with max_inflight_tasks: auto, the next step's cap
(rollout/inflight_control.py)."""
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Protocol

from worker.trainer.config import TrainingConfig
from worker.trainer.inference.time_slicing import GenerationPause
from worker.trainer.rollout.gathering import Gathered
from worker.trainer.rollout.inflight_control import InflightController, StepOutcome, cap_bounds
from worker.trainer.rollout.pipeline_window import INFLIGHT_CAP, PipelineWindow
from worker.trainer.rollout.staleness import StalenessPolicy
from worker.trainer.metric_names import ASYNC_AHEAD_BOUND, ASYNC_MAX_INFLIGHT


class Pipeline(Protocol):
    """The rollout worker's side that this reads and sets (rollout/worker.py)."""
    max_inflight: int
    wave: int
    scoring_threads: int

    @property
    def queue_depth(self) -> int: ...
    def take_window(self) -> PipelineWindow: ...
    def set_max_inflight(self, cap: int) -> None: ...
    def generation_paused(self) -> AbstractContextManager[None]: ...


class PipelineReadings:
    def __init__(self, rollout: Pipeline, staleness: StalenessPolicy, config: TrainingConfig):
        self.rollout, self.staleness = rollout, staleness
        self.controller = auto_controller(rollout, staleness, config)

    def after_step(self, gathered: Gathered, step_s: float) -> dict[str, float]:
        """The step's pipeline metrics (the cap is the one in force during the step); then the
        auto cap moves for the next."""
        window = self.rollout.take_window()
        metrics = {**window.metrics(), ASYNC_MAX_INFLIGHT: float(self.rollout.max_inflight),
                   ASYNC_AHEAD_BOUND: float(self.staleness.useful_ahead)}
        if self.controller is not None:
            outcome = StepOutcome(step_s=step_s, waited_s=gathered.waited_s - gathered.waited_for_expiring_s,
                                  groups_trained=len(gathered.groups), dropped_stale=len(gathered.dropped),
                                  queue_depth=self.rollout.queue_depth, held_by_cap=window.share_held_by(INFLIGHT_CAP),
                                  group_latency_s=window.group_latency_s,
                                  group_scoring_busy_s=window.group_scoring_busy_s)
            self.rollout.set_max_inflight(self.controller.update(outcome))
        return metrics


def auto_controller(rollout: Pipeline, staleness: StalenessPolicy, config: TrainingConfig) -> InflightController | None:
    """The controller of a max_inflight_tasks: auto run, from the cap the worker started with."""
    if config.max_inflight_tasks != "auto":
        return None
    floor, ceiling = cap_bounds(staleness.useful_ahead, config.queue_maxsize, rollout.wave)
    return InflightController(rollout.max_inflight, staleness.groups_per_step, floor, ceiling,
                              scoring_threads=rollout.scoring_threads)


@contextmanager
def training_turn(rollout: Pipeline, pause: GenerationPause) -> Iterator[None]:
    """The step's training and weight sync. Where vLLM and the trainer take turns for the cores,
    the server is paused for it, and the worker's polls meanwhile count as paused, not as held
    by a bound: from before the pause begins until after it ends (rollout/pipeline_window.py)."""
    if not pause.pausing:
        yield
        return
    with rollout.generation_paused(), pause.while_training():
        yield
