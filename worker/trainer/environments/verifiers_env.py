"""A verifiers environment named by id (README: Environments): its dataset, rollout and rubric.

verifiers (pinned in requirements-trainer-*.txt) loads an id by importing the module named like
it ("vf-math" and "owner/vf-math" → vf_math; verifiers_check.module_name) and calling its
load_environment(**params); it must be a MultiTurnEnv (SingleTurnEnv, ToolEnv and StatefulToolEnv
are). Its turns are driven here, not by its own rollout(), each episode with a state of its own
(verifiers_episode.py); its rubric is scored with the run's rewards (verifiers_rubric.py). Every
verifiers call runs on the environment's own event loop thread.
Details: docs/capabilities/environments.md#verifiers.
"""
import atexit
import json
import signal
import threading
from contextlib import contextmanager

from worker.trainer.environments.base import Environment, Episode, Tool, prompt_messages
from worker.trainer.environments.setup_error import EnvironmentSetupError
from worker.trainer.environments.loop_thread import LoopThread
from worker.trainer.environments.verifiers_check import verifiers_problem
from worker.trainer.environments.verifiers_episode import VerifiersEpisode
from worker.trainer.environments.verifiers_rubric import rubric_functions
from worker.trainer.rollout.scoring import RewardFunction
from worker.trainer.spec import EnvironmentSpec

# How long a caller waits for one verifiers call (a step, an episode's end, a rubric function).
# The episode runner gives up sooner (environment_timeout_s); this bounds the thread left waiting.
CALL_TIMEOUT_S = 600.0

_LOCK = threading.Lock()
_LOADED: dict[tuple[str, str], object] = {}  # (id, params) → the verifiers environment


def load_verifiers_environment(spec: EnvironmentSpec) -> "VerifiersEnvironment":
    return VerifiersEnvironment(spec.verifiers_id or "", spec.params)


def verifiers_dataset(verifiers_id: str, params: dict, split: str = "train"):
    """The environment's rows (datasets.Dataset): prompt (chat messages, its system prompt
    included), answer, task, example_id, and info where it has one. split "eval": its evaluation rows."""
    if split not in ("train", "eval"):
        raise EnvironmentSetupError(f"a verifiers environment's split is train or eval, not {split!r}")
    environment = loaded(verifiers_id, params)
    try:
        return environment.get_eval_dataset() if split == "eval" else environment.get_dataset()
    except Exception as exc:
        raise EnvironmentSetupError(f"verifiers environment {verifiers_id!r} gives no dataset: "
                                    f"{_reason(exc)}") from None


def loaded(verifiers_id: str, params: dict):
    """The verifiers environment, loaded once per process: a run's dataset and its environment
    are the same one."""
    key = (verifiers_id, json.dumps(params, sort_keys=True, default=str))
    with _LOCK:
        if key not in _LOADED:
            _LOADED[key] = _load(verifiers_id, params)
        return _LOADED[key]


def _forget(verifiers_id: str, params: dict) -> None:
    with _LOCK:
        _LOADED.pop((verifiers_id, json.dumps(params, sort_keys=True, default=str)), None)


def _load(verifiers_id: str, params: dict):
    if problem := verifiers_problem(verifiers_id, where="on this worker"):
        raise EnvironmentSetupError(problem)
    import verifiers as vf

    try:
        with _without_process_hooks():
            environment = vf.load_environment(verifiers_id, **params)
    except Exception as exc:
        raise EnvironmentSetupError(f"verifiers environment {verifiers_id!r} cannot be loaded: "
                                    f"{_reason(exc)}") from None
    if not isinstance(environment, vf.MultiTurnEnv):
        raise EnvironmentSetupError(f"verifiers environment {verifiers_id!r} is a {type(environment).__name__}; only "
                                    "a MultiTurnEnv (SingleTurnEnv, ToolEnv, ...) can be played here")
    if environment.message_type != "chat":
        raise EnvironmentSetupError(f"verifiers environment {verifiers_id!r} uses {environment.message_type!r} "
                                    "messages; only chat environments can be played here")
    return environment


def _reason(exc: BaseException) -> str:
    """What went wrong at the bottom: verifiers wraps an environment's own error in its own."""
    while exc.__cause__ is not None:
        exc = exc.__cause__
    return f"{type(exc).__name__}: {exc}"


class _Inert:
    """A module whose named functions do nothing; the rest is the module's."""

    def __init__(self, module, *names: str):
        self._module, self._names = module, names

    def __getattr__(self, name: str):
        if name in self._names:
            return lambda *args, **kwargs: None
        return getattr(self._module, name)


@contextmanager
def _without_process_hooks():
    """verifiers' Environment.__post_init__ installs SIGINT and SIGTERM handlers (SIGTERM: its
    teardown, then exit(143)) and an atexit teardown. They would replace how the worker stops a
    trainer, and signal.signal fails off the main thread: while an environment is built, its
    module installs nothing, and the handlers are put back should anything else have moved them.
    VerifiersEnvironment.close() tears the environment down instead."""
    import verifiers.envs.environment as module

    handlers = {number: signal.getsignal(number) for number in (signal.SIGINT, signal.SIGTERM)}
    saved = module.signal, module.atexit
    module.signal, module.atexit = _Inert(signal, "signal"), _Inert(atexit, "register")
    try:
        yield
    finally:
        module.signal, module.atexit = saved
        if threading.current_thread() is threading.main_thread():
            for number, handler in handlers.items():
                if handler is not None and signal.getsignal(number) is not handler:
                    signal.signal(number, handler)


class VerifiersEnvironment(Environment):
    """Played by episodes alone (VerifiersEpisode): a verifiers rollout keeps a state from its
    first turn to its last, which step(messages, row) would have nowhere to keep."""

    def __init__(self, verifiers_id: str, params: dict):
        self.verifiers_id, self.params = verifiers_id, params
        self.env = loaded(verifiers_id, params)
        self.tools = tools_of(self.env)
        self.loop = LoopThread(f"verifiers {verifiers_id}")
        self.closed = False

    def start(self, row: dict, prompt) -> list[dict]:
        """The row's prompt: verifiers put the system prompt and few-shot turns in it already."""
        return [{key: value for key, value in message.items() if value is not None}
                for message in prompt_messages(prompt)]

    def episode(self, row: dict) -> Episode:
        return VerifiersEpisode(self, row)

    def run(self, coroutine):
        """A verifiers coroutine's result, run on this environment's loop."""
        return self.loop.run(coroutine, CALL_TIMEOUT_S)

    def reward_functions(self) -> list[RewardFunction]:
        return rubric_functions(self.env.rubric, self.run)

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        try:
            self.run(self.env._teardown())
        finally:
            self.loop.stop()
            _forget(self.verifiers_id, self.params)


def tools_of(environment) -> tuple[Tool, ...]:
    """A ToolEnv's tools (its OpenAI tool schemas). The text format fills one argument, the first
    required one; a tool of several takes the hermes format."""
    tools = []
    for schema in getattr(environment, "oai_tools", None) or []:
        function = schema.get("function", {})
        parameters = function.get("parameters") or {}
        properties = parameters.get("properties") or {}
        names = parameters.get("required") or list(properties) or ["input"]
        tools.append(Tool(function.get("name", ""), function.get("description") or "", names[0],
                          (properties.get(names[0]) or {}).get("description", ""), schema=schema))
    return tuple(tools)
