"""The run's environment, for a multi-turn run, and how its prompts are written as text."""
from collections.abc import Callable
from dataclasses import dataclass

from worker.trainer.environments.base import Environment
from worker.trainer.environments.episodes import EpisodeLimits, EpisodeRunner
from worker.trainer.environments.loading import load_environment, tool_format_for
from worker.trainer.environments.rendering import ChatRendering
from worker.trainer.rewards.sandbox.pool import SandboxPool
from worker.trainer.startup.starting_run import StartingRun


@dataclass(frozen=True)
class EnvironmentSetup:
    environment: Environment | None  # None: a single-turn run, one completion a prompt
    tool_format: str  # how an environment's tool calls are written (environments/tool_calls.py)
    rendering: ChatRendering  # the chat template, given the tools' schemas where the format is hermes

    def episode_runner(self, run: StartingRun, current_version: Callable[[], int]) -> EpisodeRunner:
        """One per user (rollouts, evaluation): each counts its own failed episodes."""
        if self.environment is None:
            raise ValueError("a single-turn run plays no episodes: it has no environment")
        return EpisodeRunner(self.environment, self.rendering, EpisodeLimits.of(run.config), self.tool_format,
                             current_version=current_version, on_warning=run.warn)


def set_up_environment(run: StartingRun, tokenizer, sandbox: SandboxPool | None) -> EnvironmentSetup:
    """An environment's code that does not load fails the run here, with its line."""
    spec = run.spec.environment
    if spec is None:
        return EnvironmentSetup(None, "text", ChatRendering(tokenizer, None))
    tool_format = tool_format_for(run.config.tool_call_format, ChatRendering(tokenizer))
    environment = load_environment(spec, tool_format, sandbox)
    run.lifecycle.started(environment, environment.close)
    tools = ", ".join(tool.name for tool in environment.tools) or "none"
    what = spec.builtin or spec.verifiers_id or spec.kind
    run.report.log(f"environment {spec.name!r} ({what}): tools {tools}, tool calls in the "
                   f"{tool_format} format, at most {run.config.max_turns} turns an episode")
    schemas = [tool.as_schema() for tool in environment.tools]
    return EnvironmentSetup(environment, tool_format, ChatRendering(tokenizer, schemas if tool_format == "hermes"
                                                                    else None))
