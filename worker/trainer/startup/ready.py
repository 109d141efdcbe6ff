"""What start-up hands the training loop: every part built, started and ready."""
from dataclasses import dataclass
from pathlib import Path

from worker.trainer.checkpoints.keeping import CheckpointKeeper
from worker.trainer.checkpoints.saving import TrainerState
from worker.trainer.config import TrainingConfig
from worker.trainer.data.order import ConsumedFrontier
from worker.trainer.distributed.crew import Crew
from worker.trainer.evaluation.evaluator import Evaluator
from worker.trainer.inference.time_slicing import GenerationPause
from worker.trainer.reporting.session import ReportingSession
from worker.trainer.rewards.judges.served import ServedJudges
from worker.trainer.rollout.scoring import RewardFunction
from worker.trainer.rollout.staleness import StalenessPolicy
from worker.trainer.rollout.worker import RolloutWorker
from worker.trainer.training.setup import TrainingParts
from worker.trainer.weight_sync.interface import WeightSync


@dataclass(frozen=True)
class ReadyParts:
    config: TrainingConfig
    output_dir: Path
    report: ReportingSession
    checkpoints: CheckpointKeeper  # listed by an event on the control plane's disk, else uploaded to it
    crew: Crew  # the other trainer processes, which train their share of each step
    state: TrainerState  # advanced in place by the loop; the rollouts and evaluations read its version
    frontier: ConsumedFrontier  # the prompts used up, saved as the data position to resume from
    training: TrainingParts  # model, tokenizer, optimizer, schedule
    rewards: list[RewardFunction]  # training's, an environment's own included
    eval_rewards: list[RewardFunction]  # empty: the evaluation scores with `rewards`
    weight_sync: WeightSync
    rollout: RolloutWorker  # started: groups arrive while the loop trains
    staleness: StalenessPolicy
    cpu_sharing: str  # how vLLM and the trainer share the CPU (inference/cpu_sharing.py)
    generation_pause: GenerationPause  # pauses generation during a step where they take turns
    evaluator: Evaluator | None  # None: the run does not evaluate (no evaluation rows)
    served_judges: ServedJudges | None = None  # their servers, watched each step; None: no served judge
