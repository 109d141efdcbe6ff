from runs.models.checkpoint_upload import CheckpointUpload, UploadBusy, UploadState
from runs.models.dataset import Dataset
from runs.models.environment import Environment, EnvironmentReward
from runs.models.environment_dry_run import EnvironmentDryRun, EnvironmentDryRunState
from runs.models.hub_push import HubPush, HubPushStatus
from runs.models.reward import RewardFunction
from runs.models.reward_dry_run import RewardDryRun, RewardDryRunState
from runs.models.training_config import TrainingConfig
from runs.models.run import IllegalTransition, Run, RunEvalReward, RunReward, RunStatus
from runs.models.telemetry import (
    Alarm, Checkpoint, EvalOutcome, EventCursor, LogLine, MetricPoint, RetrainedMetricPoint, Sample,
)

__all__ = [
    "Alarm", "Checkpoint", "CheckpointUpload", "Dataset", "Environment", "EnvironmentDryRun", "EnvironmentDryRunState",
    "EnvironmentReward", "EvalOutcome", "EventCursor", "HubPush", "HubPushStatus", "IllegalTransition", "LogLine",
    "MetricPoint", "RetrainedMetricPoint", "RewardDryRun", "RewardDryRunState", "RewardFunction", "Run",
    "RunEvalReward", "RunReward", "RunStatus",
    "Sample", "TrainingConfig", "UploadBusy", "UploadState",
]
