"""The sandbox that runs user code in dry runs as it does in runs, and the frames its processes
speak (the control plane's built-in and dataset-check children use the same framing)."""
from worker.trainer.rewards.sandbox import SandboxError, SandboxLimits, SandboxPool, protocol
from worker.trainer.rewards.sandbox.results import ResultError, check_values

__all__ = ["ResultError", "SandboxError", "SandboxLimits", "SandboxPool", "check_values", "protocol"]
