"""An environment written in Python by a user: `step(messages, row)` (and optionally `start(row)`
and `TOOLS`) run in the reward sandbox, never in the trainer (README: Environments)."""
from worker.trainer.environments.base import Environment, Tool, prompt_messages
from worker.trainer.environments.setup_error import EnvironmentSetupError
from worker.trainer.environments.source_check import source_problems
from worker.trainer.rewards.sandbox.errors import SandboxError

START_ROLES = ("system", "user", "assistant", "tool")


class CodeEnvironment(Environment):
    def __init__(self, sandbox, source: str, tools: tuple[Tool, ...]):
        self.sandbox, self.source, self.tools = sandbox, source, tools

    @classmethod
    def loaded(cls, sandbox, source: str, name: str) -> "CodeEnvironment":
        """Checked and loaded once before the first episode: code that does not load fails the run
        here, with the line to fix."""
        if problems := source_problems(source):
            raise EnvironmentSetupError(f"environment {name!r}: {'; '.join(problems)}")
        try:
            told = sandbox.env_tools(source)
        except SandboxError as exc:
            where = f" (line {exc.line})" if exc.line else ""
            raise EnvironmentSetupError(f"environment {name!r}'s code does not load{where}: {exc.message}") from None
        tools = tuple(Tool(t["name"], t.get("description", ""), t.get("parameter", "input"),
                           t.get("parameter_description", "")) for t in told)
        return cls(sandbox, source, tools)

    def start(self, row: dict, prompt) -> list[dict]:
        first = self.sandbox.env_start(self.source, _plain(row)).reply
        if first is None:
            return prompt_messages(prompt)
        if isinstance(first, str):
            return [{"role": "user", "content": first}]
        if not isinstance(first, list) or not all(isinstance(m, dict) and m.get("role") in START_ROLES
                                                   and isinstance(m.get("content"), str) for m in first):
            raise ValueError("start(row) answers None, text, or a list of messages with role and content")
        return [{"role": m["role"], "content": m["content"]} for m in first]

    def step(self, messages: list[dict], row: dict):
        return self.sandbox.env_step(self.source, messages, _plain(row)).reply


def _plain(row: dict) -> dict:
    """The row without the episode's first messages the trainer keeps in it."""
    return {key: value for key, value in row.items() if key != "prompt"}
