"""Plays one episode of an environment on a dataset row, with typed assistant turns or the model,
and reports every turn, the way the episode ended, each sandbox call's time, output and error, and
the reward the rubric gives the episode (rubric.py).

The episode is played by the trainer's own EpisodeRunner (worker/trainer/environments/episodes.py)
against the environment the trainer would load (loading.py): only the sampler differs, typed
text or a model here instead of vLLM. So tool calls are parsed, limited and answered exactly as
in a run.
"""
import asyncio
import time
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from runs.dry_runs import model_play
from runs.dry_runs.builtin_process import shared_builtins
from runs.environments.builtin_steps import BuiltinInAProcess
from runs.environments.models.environment import Environment
from runs.environments.rubric import score_episode
from runs.rewards.rows import json_safe
from runs.rewards.sandbox_pool import DRY_RUN_LIMITS, SandboxKey, lease
from worker.trainer.for_control_plane.episodes import (
    ChatRendering,
    Completion,
    EpisodeLimits,
    EpisodeRunner,
    load_environment,
    tool_format_for,
    tool_schema,
)
from worker.trainer.for_control_plane.sandbox import SandboxError
from worker.trainer.spec import EnvironmentSpec

MAX_TURNS = 16
MAX_TOOL_CALLS = 16


@dataclass
class Play:
    """What a validated dry-run request asks (environments/dry_run_serializers.py)."""
    row: dict                     # the dataset row, as read
    prompt_column: str
    turns: list[str] | None       # typed assistant turns; None: the model plays
    model: str
    max_turns: int
    tool_call_format: str         # auto, hermes or text


class RecordingSandbox:
    """The sandbox as the environment sees it, keeping each call's time, output and error to show.
    Anything else the environment asks of the pool goes straight through."""

    def __init__(self, pool):
        self.pool, self.calls = pool, []

    def env_tools(self, source):
        return self._kept("load", lambda: self.pool.env_tools(source)).reply

    def env_start(self, source, row):
        return self._kept("start", lambda: self.pool.env_start(source, row))

    def env_step(self, source, messages, row):
        return self._kept("step", lambda: self.pool.env_step(source, messages, row))

    def _kept(self, op: str, call):
        started = time.perf_counter()
        try:
            result = call()
        except SandboxError as exc:
            self.calls.append({"op": op, "seconds": time.perf_counter() - started, "output": exc.output,
                               "error": exc.as_dict()})
            raise
        if op == "load":
            result = _Told(result)
        self.calls.append({"op": op, "seconds": getattr(result, "seconds", time.perf_counter() - started),
                           "output": getattr(result, "output", ""), "error": None})
        return result

    def __getattr__(self, name):
        return getattr(self.pool, name)


@dataclass
class _Told:
    reply: object
    output: str = ""


class TypedServer:
    """Samples the typed turns in order, as if the model had written them."""

    def __init__(self, turns: list[str]):
        self.turns = list(turns)

    async def sample(self, prompt_ids, n, columns=None, overrides=None) -> list[Completion]:
        return [Completion(token_ids=[], logprobs=[], text=self.turns.pop(0), finish_reason="stop")]


class TextOnlyRendering:
    """Typed turns have no tokens: the replies add none either."""
    takes_tools = False

    def reply_ids(self, context_ids, messages, reply) -> list[int]:
        return []


def play_episode(environment: Environment, play: Play, *, requested_by: int, on_turn=None) -> dict:
    """The episode's report; `on_turn(k)` is awaited before the model's k-th turn (typed turns: never).
    `requested_by`: the id of the account asking; code runs only in processes of that account and
    the code's owner (rewards/sandbox_pool.py)."""
    with lease(SandboxKey(requested_by=requested_by, code_owner=environment.owner_id)) as pool:
        return _played(environment, play, RecordingSandbox(pool), requested_by, on_turn)


def _played(environment: Environment, play: Play, sandbox: RecordingSandbox, requested_by: int,
            on_turn) -> dict:
    row = json_safe(play.row)
    prompt = row.get(play.prompt_column)
    model = None if play.turns is not None else model_play.load(play.model)
    rendering = ChatRendering(model[0]) if model else TextOnlyRendering()
    fmt = _tool_format(play, rendering)
    report: dict[str, Any] = {
        "tool_call_format": fmt, "player": "typed" if model is None else "model",
        "model": play.model if model else None, "calls": sandbox.calls, "tools": [], "turns": [],
        "end_reason": None, "error": None, "rubric": [], "reward": None}
    started = time.perf_counter()
    try:
        env = _loaded(environment, fmt, sandbox)
        report["tools"] = [{"name": t.name, "description": t.description, "parameter": t.parameter}
                           for t in env.tools]
        messages = env.start(row, prompt)
    except Exception as exc:  # noqa: BLE001 (a code environment's load or start failing is what a dry run shows)
        report.update(end_reason="environment_error", error=_sandbox_error(sandbox) or _error(exc))
        return {**report, "seconds": time.perf_counter() - started}
    try:
        record = _run(env, messages, row, play, fmt, model, on_turn)
        # A failed episode gets no reward in a run: none is shown here either.
        scored = {"rubric": [], "reward": None} if record.failed else \
            score_episode(environment, env, row, play.prompt_column, record, requested_by)
    finally:
        env.close()
    report.update(turns=record.turns, end_reason=record.end_reason, tool_calls=record.tool_calls,
                  tool_errors=record.tool_errors, assistant_turns=record.assistant_turns, **scored,
                  error=(_sandbox_error(sandbox) or getattr(env, "failure", None) or _turn_error(record.turns))
                  if record.failed else None)
    return {**report, "seconds": time.perf_counter() - started}


def _loaded(environment: Environment, fmt: str, sandbox: RecordingSandbox):
    """The environment as a run would load it; a built-in's steps go to a process that a time
    limit can stop (builtin_steps.py), code's to the sandbox."""
    env = load_environment(EnvironmentSpec.model_validate(environment.launch_spec()), fmt, sandbox=sandbox)
    if environment.kind != Environment.Kind.BUILTIN:
        return env
    return BuiltinInAProcess(env, environment.builtin, environment.params, fmt, shared_builtins())


def _sandbox_error(sandbox: RecordingSandbox) -> dict | None:
    """The last sandbox call's error, with its kind, traceback and line."""
    return next((call["error"] for call in reversed(sandbox.calls) if call["error"]), None)


def _turn_error(turns: list[dict]) -> dict:
    """A built-in's failure, as the episode runner wrote it on the last turn."""
    message = next((turn["error"] for turn in reversed(turns) if turn.get("error")), "the environment failed")
    return {"kind": "exception", "message": message, "traceback": "", "line": None}


def _tool_format(play: Play, rendering) -> str:
    if play.tool_call_format != "auto" or play.turns is None:
        return tool_format_for(play.tool_call_format, rendering)
    # Typed turns say which format they use by what they write.
    return "hermes" if any("<tool_call>" in turn for turn in play.turns) else "text"


def _run(env, messages: list[dict], row: dict, play: Play, fmt: str, model, on_turn=None):
    max_turns = play.max_turns if play.turns is None else min(play.max_turns, len(play.turns))
    per_turn = model_play.MAX_NEW_TOKENS
    limits = EpisodeLimits(max_turns=max_turns, max_tool_calls=MAX_TOOL_CALLS, max_turn_tokens=per_turn,
                           max_episode_tokens=per_turn * max_turns, max_context=1 << 20,
                           timeout_s=max(DRY_RUN_LIMITS.call_timeout_s, settings.DRY_RUN_TIMEOUT_S) + 2.0)
    if model is None:
        assert play.turns is not None  # no model: typed turns play (_played)
        runner = EpisodeRunner(env, TextOnlyRendering(), limits, fmt, current_version=lambda: None)
        return asyncio.run(runner.play(TypedServer(play.turns), [], messages, row)).episode
    tokenizer, policy = model
    tools = [tool_schema(t.name, t.description, t.parameter, t.parameter_description) for t in env.tools]
    rendering = ChatRendering(tokenizer, tools)
    runner = EpisodeRunner(env, rendering, limits, fmt, current_version=lambda: None)
    prompt_ids = rendering.ids(rendering.text(messages, generation_prompt=True))
    server = model_play.ModelServer(tokenizer, policy, on_turn)
    return asyncio.run(runner.play(server, prompt_ids, messages, row)).episode


def _error(exc: Exception) -> dict:
    if isinstance(exc, SandboxError):
        return exc.as_dict()
    return {"kind": "setup", "message": str(exc) or type(exc).__name__, "traceback": "", "line": None}
