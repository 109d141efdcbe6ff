"""A built-in environment for a dry run whose steps run in a process killed past DRY_RUN_TIMEOUT_S
(runs/dry_runs/builtin_process.py), not in a thread of the web server.

A step computes from what the user typed (the calculator evaluates expressions, feedback reads
numbers); the rest of the environment (its tools, first messages, own rewards) is plain data
and stays here. The trainer plays built-ins in-process: there, the calculator's own bounds
(arithmetic_tool.py) are what holds.
"""
from worker.trainer.for_control_plane.episodes import Environment
from worker.trainer.for_control_plane.sandbox import SandboxError


class BuiltinInAProcess(Environment):
    def __init__(self, environment: Environment, builtin: str, params: dict, tool_format: str, pool):
        self.environment, self.builtin, self.params = environment, builtin, params
        self.tool_format, self.pool = tool_format, pool
        self.tools = environment.tools
        self.failure: dict | None = None   # the last step's error, as a dry run reports it

    def start(self, row: dict, prompt) -> list[dict]:
        return self.environment.start(row, prompt)

    def step(self, messages: list[dict], row: dict):
        try:
            return self.pool.env_step(self.builtin, self.params, self.tool_format, messages, row)
        except SandboxError as exc:
            self.failure = exc.as_dict()
            raise

    def extra_rewards(self):
        return self.environment.extra_rewards()

    def reward_functions(self):
        return self.environment.reward_functions()

    def close(self) -> None:
        self.environment.close()
