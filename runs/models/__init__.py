from runs.models.dataset import Dataset
from runs.models.hub_push import HubPush, HubPushStatus
from runs.models.reward import RewardFunction
from runs.models.training_config import TrainingConfig
from runs.models.run import IllegalTransition, Run, RunReward, RunStatus
from runs.models.telemetry import Checkpoint, EventCursor, LogLine, MetricPoint, RetrainedMetricPoint, Sample

__all__ = [
    "Checkpoint", "Dataset", "EventCursor", "HubPush", "HubPushStatus", "IllegalTransition", "LogLine", "MetricPoint",
    "RetrainedMetricPoint", "RewardFunction", "Run", "RunReward", "RunStatus", "Sample", "TrainingConfig",
]
