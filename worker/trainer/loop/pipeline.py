"""The rollout pipeline as each step sees it: what held generation back and how long groups
took since the step before (rollout/pipeline_window.py), the in-flight cap in force and the
staleness bound, as the step's metrics; and with max_inflight_tasks: auto, the next step's cap
(rollout/inflight_control.py)."""
from typing import Protocol

from worker.trainer.config import TrainingConfig
from worker.trainer.rollout.gathering import Gathered
from worker.trainer.rollout.inflight_control import InflightController, StepOutcome, cap_bounds
from worker.trainer.rollout.pipeline_window import INFLIGHT_CAP, PipelineWindow
from worker.trainer.rollout.staleness import StalenessPolicy


class Pipeline(Protocol):
    """The rollout worker's side that this reads and sets (rollout/worker.py)."""
    max_inflight: int
    wave: int

    @property
    def queue_depth(self) -> int: ...
    def take_window(self) -> PipelineWindow: ...
    def set_max_inflight(self, cap: int) -> None: ...


class PipelineReadings:
    def __init__(self, rollout: Pipeline, staleness: StalenessPolicy, config: TrainingConfig):
        self.rollout, self.staleness = rollout, staleness
        self.controller = auto_controller(rollout, staleness, config)

    def after_step(self, gathered: Gathered, step_s: float) -> dict[str, float]:
        """The step's pipeline metrics (the cap is the one in force during the step); then the
        auto cap moves for the next."""
        window = self.rollout.take_window()
        metrics = {**window.metrics(), "async/max_inflight": float(self.rollout.max_inflight),
                   "async/ahead_bound": float(self.staleness.useful_ahead)}
        if self.controller is not None:
            outcome = StepOutcome(step_s=step_s, waited_s=gathered.waited_s - gathered.waited_for_expiring_s,
                                  groups_trained=len(gathered.groups), dropped_stale=len(gathered.dropped),
                                  queue_depth=self.rollout.queue_depth, held_by_cap=window.share_held_by(INFLIGHT_CAP),
                                  group_latency_s=window.group_latency_s)
            self.rollout.set_max_inflight(self.controller.update(outcome))
        return metrics


def auto_controller(rollout: Pipeline, staleness: StalenessPolicy, config: TrainingConfig) -> InflightController | None:
    """The controller of a max_inflight_tasks: auto run, from the cap the worker started with."""
    if config.max_inflight_tasks != "auto":
        return None
    floor, ceiling = cap_bounds(staleness.useful_ahead, config.queue_maxsize, rollout.wave)
    return InflightController(rollout.max_inflight, staleness.groups_per_step, floor, ceiling)
