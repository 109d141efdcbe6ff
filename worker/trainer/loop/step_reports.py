"""What a step sends to the run page: its metrics (with what the judges measured of
themselves) every logging_steps, and the completions of the groups kept for the page."""
import logging
import math

from worker.trainer.config import TrainingConfig
from worker.trainer.reporting.session import ReportingSession
from worker.trainer.rewards.judges.disagreement import disagreement_metrics
from worker.trainer.rollout.metrics import sample_records
from worker.trainer.rollout.sample_keeping import kept_groups
from worker.trainer.rollout.scoring import RewardFunction
from worker.trainer.metric_names import JUDGE_MEASURE

log = logging.getLogger("worker.trainer")


class StepReports:
    def __init__(self, report: ReportingSession, config: TrainingConfig, rewards: list[RewardFunction],
                 eval_rewards: list[RewardFunction]):
        self.report, self.config = report, config
        self.rewards, self.eval_rewards = rewards, eval_rewards

    def metrics(self, step: int, metrics: dict, groups: list | None = None) -> None:
        """`groups`: the step's, whose rewards' own measures are sent with its metrics (None: the metrics alone)."""
        if step % self.config.logging_steps:
            return
        if groups is not None:
            metrics = {**metrics, **self.reward_metrics(groups)}
        finite = {name: float(v) for name, v in metrics.items() if math.isfinite(v)}
        if len(finite) < len(metrics):
            self.report.log(f"non-finite metrics at step {step}: {sorted(set(metrics) - set(finite))}",
                            level="warning")
        self.report.metrics(step, finite)

    def reward_metrics(self, groups: list) -> dict[str, float]:
        """What the judges and reward models measured of themselves since the last logged step
        (judge/<name>/<key>), and how the judges' pay disagrees with the verifiers' on this step's
        groups (judges/disagreement.py). A judge that timed out or failed is said once, counted."""
        metrics: dict[str, float] = {}
        taken: set[int] = set()  # a judge shared by training and evaluation is measured once
        for function in self.rewards + self.eval_rewards:
            if function.take_metrics is None or id(function.fn) in taken:
                continue
            taken.add(id(function.fn))
            try:
                measured = function.take_metrics()
            except Exception as exc:  # a judge's bookkeeping must never fail a step
                log.exception("taking the metrics of reward %r", function.name)
                self.report.log(f"reward {function.name!r}: its metrics could not be taken: {exc}", level="warning")
                continue
            metrics.update({JUDGE_MEASURE.name(judge=function.name, measure=key): value
                            for key, value in measured.items()})
            self._say_judge_faults(function.name, measured)
        if groups and any(function.pass_threshold is not None for function in self.rewards):
            metrics.update(disagreement_metrics(groups, self.rewards))
        return metrics

    def _say_judge_faults(self, name: str, measured: dict[str, float]) -> None:
        timeouts, failures = int(measured.get("timeouts", 0)), int(measured.get("failures", 0))
        if not (timeouts or failures):
            return
        calls = int(measured.get("calls", 0))
        self.report.log(f"judge {name!r}: {timeouts} call(s) timed out and {failures} failed of {calls} since the "
                        "last logged step; their completions' rewards are None", level="warning")

    def samples(self, step: int, groups: list, advantages: list[float], trained_version: int) -> None:
        """The step's kept groups (rollout/sample_keeping.py) to the run page. The step's metrics
        (train_step, rollout_metrics) were computed from all of them before this pick."""
        config = self.config
        kept = kept_groups(step, len(groups), config.samples_groups_per_step, config.samples_every_steps,
                           config.seed) if config.log_completions else []
        if kept:
            self.report.samples(step, sample_records(groups, advantages, kept, trained_version))
