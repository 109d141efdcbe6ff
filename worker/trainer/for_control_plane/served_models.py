"""What a judge's or a reward model's dry run starts in the control plane's consumer, as a run
would: the judge and its endpoint, the reward model, and a served judge's own vLLM server.

Imported inside the consumer's functions, never at the web process's start: the server and the
judge's client bring an HTTP stack, and a reward model loads torch when it is built.
"""
from worker.trainer.inference.launch import new_api_key
from worker.trainer.inference.server import VLLMServer
from worker.trainer.rewards.judges.judge import Judge, JudgeEndpoint
from worker.trainer.rewards.judges.public_hosts import endpoint_transport
from worker.trainer.rewards.judges.reward_model import RewardModel

__all__ = ["Judge", "JudgeEndpoint", "RewardModel", "VLLMServer", "endpoint_transport", "new_api_key"]
