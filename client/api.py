"""The REST API as Python calls, thinly over httpx: what a script or a notebook automates.

    api = ControlPlane("http://127.0.0.1:8000", token="...")
    run = api.create_run(name="gsm8k", dataset=3, rewards=[1, 2], config={"max_steps": 60})
    api.start_run(run["id"])

One method per operation a user calls, grouped by resource in client/resources/; which method
calls which of the API's operations is client/operations.py (a test checks it against the API's
schema both ways). The token goes over plain http:// only to this machine unless insecure=True
(client/credentials.py; docs/security.md#the-command-line). Every call returns the API's JSON as
it is; an answer other than 2xx raises ApiError with the server's words (one line per refused
field), so a script fails with the reason, not a traceback of the HTTP library.
"""
from client.resources.checkpoints import CheckpointCalls
from client.resources.compare import CompareCalls
from client.resources.configs import ConfigCalls
from client.resources.datasets import DatasetCalls
from client.resources.environments import EnvironmentCalls
from client.resources.evaluations import EvaluationCalls
from client.resources.rewards import RewardCalls
from client.resources.runs import FINISHED, RunCalls
from client.resources.workers import WorkerCalls
from client.session import ApiError, describe_problem

__all__ = ["FINISHED", "ApiError", "ControlPlane", "describe_problem"]


class ControlPlane(DatasetCalls, RewardCalls, ConfigCalls, EnvironmentCalls, RunCalls, CheckpointCalls,
                   CompareCalls, EvaluationCalls, WorkerCalls):
    """ControlPlane(url, token, timeout_s=30, insecure=False): every call of client/resources/."""
