"""The reward sandbox: user reward code runs in separate, limited, reusable processes.

    pool = SandboxPool(size=2)
    result = pool.call(source, prompts, completions, {"answer": [...]})   # CallResult or SandboxError
    pool.close()

Nothing here imports Django; the web server (dry runs) and the trainer (runs) both use it.
"""
from worker.trainer.rewards.sandbox.errors import SandboxError
from worker.trainer.rewards.sandbox.limits import SandboxLimits
from worker.trainer.rewards.sandbox.pool import CallResult, SandboxPool

__all__ = ["CallResult", "SandboxError", "SandboxLimits", "SandboxPool"]
