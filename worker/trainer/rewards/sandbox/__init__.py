"""The reward sandbox: user reward and environment code runs in separate, limited, reusable processes.

    pool = SandboxPool(size=2)
    result = pool.call(source, prompts, completions, {"answer": [...]})   # CallResult or SandboxError
    tools = pool.env_tools(env_source)                 # an environment's TOOLS, one dict per tool
    opening = pool.env_start(env_source, row)          # EnvCall: .reply is what start(row) returned
    turn = pool.env_step(env_source, messages, row)    # EnvCall: .reply is what step(...) returned
    pool.close()

Nothing here imports Django; the web server (dry runs) and the trainer (runs) both use it.
"""
from worker.trainer.rewards.sandbox.errors import SandboxError
from worker.trainer.rewards.sandbox.limits import SandboxLimits
from worker.trainer.rewards.sandbox.pool import CallResult, EnvCall, SandboxPool

__all__ = ["CallResult", "EnvCall", "SandboxError", "SandboxLimits", "SandboxPool"]
