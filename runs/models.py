from runs.alarms.models import Alarm
from runs.checkpoints.models.checkpoint import Checkpoint
from runs.checkpoints.models.upload import CheckpointUpload, UploadBusy, UploadState
from runs.configs.models import TrainingConfig
from runs.datasets.models import Dataset
from runs.environments.models.dry_run import EnvironmentDryRun, EnvironmentDryRunState
from runs.environments.models.environment import Environment, EnvironmentReward
from runs.evaluation.models import EvalOutcome
from runs.hub.models import HubPush, HubPushStatus
from runs.rewards.models.dry_run import RewardDryRun, RewardDryRunState
from runs.rewards.models.function import RewardFunction
from runs.telemetry.models import EventCursor, LogLine, MetricPoint, RetrainedMetricPoint, Sample
from runs.training_runs.models import IllegalTransition, Run, RunEvalReward, RunReward, RunStatus

__all__ = [
    "Alarm", "Checkpoint", "CheckpointUpload", "Dataset", "Environment", "EnvironmentDryRun", "EnvironmentDryRunState",
    "EnvironmentReward", "EvalOutcome", "EventCursor", "HubPush", "HubPushStatus", "IllegalTransition", "LogLine",
    "MetricPoint", "RetrainedMetricPoint", "RewardDryRun", "RewardDryRunState", "RewardFunction", "Run",
    "RunEvalReward", "RunReward", "RunStatus",
    "Sample", "TrainingConfig", "UploadBusy", "UploadState",
]
