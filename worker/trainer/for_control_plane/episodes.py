"""An environment's dry run, played by the trainer's own episode runner so that it plays as a run
would: the environment loaded as a run loads it, the chat template's text and tool schemas a
model is shown, the completion a sampler hands back, and the rubric's extra rewards."""
from worker.trainer.environments.base import Environment
from worker.trainer.environments.episodes import EpisodeLimits, EpisodeRunner
from worker.trainer.environments.loading import extra_reward_functions, load_environment, tool_format_for
from worker.trainer.environments.rendering import ChatRendering
from worker.trainer.environments.tool_calls import tool_schema
from worker.trainer.rollout.groups import Completion

__all__ = ["ChatRendering", "Completion", "Environment", "EpisodeLimits", "EpisodeRunner", "extra_reward_functions",
           "load_environment", "tool_format_for", "tool_schema"]
