"""The spec's reward list to callables the scorer runs.

Built-ins run in the trainer's process. Python code never does: it is called through a
SandboxPool (see rewards/sandbox/), which the trainer owns and closes when it stops.
A judge (rewards/judges/judge.py) calls a model served beside the policy (ServedJudges) or at a
URL with the key fetched for it (judges/keys.py); a reward model (judges/reward_model.py) runs on
the policy's device. Those hold threads, connections and memory: the RewardLoader that built them
closes them, and builds each only once, so an evaluation's reward that is also a training reward
shares its judge (one cache, one set of limits, one count of calls).
"""
import json
from collections.abc import Callable
from typing import TYPE_CHECKING

from pydantic import ValidationError

from worker.trainer.rewards.builtins import build_builtin
from worker.trainer.rewards.judges.catalog import JudgeParams, RewardModelParams
from worker.trainer.rewards.sandbox import SandboxPool
from worker.trainer.rewards.source_check import source_problems
from worker.trainer.rollout.scoring import RewardFunction
from worker.trainer.spec import RewardSpec

if TYPE_CHECKING:
    from worker.trainer.rewards.judges.judge import Judge
    from worker.trainer.rewards.judges.reward_model import RewardModel
    from worker.trainer.rewards.judges.served import ServedJudges

MODEL_KINDS = ("judge", "reward_model")


class RewardSetupError(ValueError):
    pass


class SandboxedReward:
    """A code reward as the scorer sees it: a plain function whose failures raise SandboxError
    (the scorer turns that into None rewards for the group and a log event saying why)."""

    def __init__(self, pool: SandboxPool, source: str):
        self.pool, self.source = pool, source

    def __call__(self, prompts, completions, **columns):
        return self.pool.call(self.source, prompts, completions, columns).values


def needs_sandbox(specs: list[RewardSpec]) -> bool:
    return any(spec.kind == "code" for spec in specs)


def served_judge_specs(specs: list[RewardSpec]) -> list[RewardSpec]:
    """The judges the worker serves itself (a second vLLM server beside the policy's)."""
    return [spec for spec in specs if spec.kind == "judge" and judge_params(spec).endpoint == "served"]


def judge_params(spec: RewardSpec) -> JudgeParams:
    return _validated(spec, JudgeParams)


def reward_model_params(spec: RewardSpec) -> RewardModelParams:
    return _validated(spec, RewardModelParams)


def check_reward_specs(specs: list[RewardSpec]) -> None:
    """What can be refused before anything is loaded or served: a built-in's parameters, code that
    does not check, a judge's or reward model's parameters. RewardSetupError naming the reward."""
    for spec in specs:
        if spec.kind == "builtin":
            _builtin(spec)
        elif spec.kind == "code":
            _checked_source(spec)
        elif spec.kind == "judge":
            judge_params(spec)
        else:
            reward_model_params(spec)


def load_rewards(specs: list[RewardSpec], sandbox: SandboxPool | None = None) -> list[RewardFunction]:
    """Rule and code rewards (a judge or reward model needs a RewardLoader, which closes it)."""
    return RewardLoader(sandbox).load(specs)


class RewardLoader:
    """Builds rewards of every kind; `close` closes the judges and reward models it built."""

    def __init__(self, sandbox: SandboxPool | None = None, api_keys: dict[str, str] | None = None,
                 served: "ServedJudges | None" = None, device: str = "cpu",
                 on_warning: Callable[[str], None] | None = None):
        self.sandbox, self.api_keys, self.served, self.device = sandbox, api_keys or {}, served, device
        self.on_warning = on_warning  # a judge's warnings (an unreadable answer, a timeout); None: its logger's
        self._built: dict[str, Judge | RewardModel] = {}  # a judge's or reward model's callable, by what it is made of
        self._endpoint_judges: list[Judge] = []

    def load(self, specs: list[RewardSpec]) -> list[RewardFunction]:
        return [self._function(spec) for spec in specs]

    def endpoint_judges(self) -> list["Judge"]:
        """The judges at a URL the user named: checked once at start (Judge.check), so that an
        endpoint refusing its key fails the run then, with its answer."""
        return list(self._endpoint_judges)

    def close(self) -> None:
        for built in self._built.values():
            built.close()
        self._built.clear()
        self._endpoint_judges.clear()

    def _function(self, spec: RewardSpec) -> RewardFunction:
        if spec.kind not in MODEL_KINDS:
            return RewardFunction(name=spec.name, weight=spec.weight, fn=self._rule(spec), verifier=spec.verifier)
        key = json.dumps([spec.name, spec.kind, spec.params, spec.has_api_key], sort_keys=True)
        if key not in self._built:
            self._built[key] = self._judge(spec) if spec.kind == "judge" else self._reward_model(spec)
        built = self._built[key]
        return RewardFunction(
            name=spec.name, weight=spec.weight, fn=built, verifier=spec.verifier, take_metrics=built.take_metrics,
            pass_threshold=judge_params(spec).pass_threshold if spec.kind == "judge" else None,
            reads_task_prompts=True)

    def _rule(self, spec: RewardSpec):
        if spec.kind == "builtin":
            return _builtin(spec)
        _checked_source(spec)
        if self.sandbox is None:
            raise RewardSetupError(
                f"reward {spec.name!r} is Python code, which runs only in a reward sandbox; none was given")
        return SandboxedReward(self.sandbox, spec.source or "")

    def _judge(self, spec: RewardSpec) -> "Judge":
        # Imported here: a run without judges never loads their HTTP client and event loop.
        from worker.trainer.rewards.judges.judge import Judge, JudgeEndpoint

        params = judge_params(spec)
        if params.endpoint == "served":
            if self.served is None:
                raise RewardSetupError(f"reward {spec.name!r} is a judge the worker serves, and no judge server "
                                       "was started for it")
            endpoint = self.served.endpoint(params.model)
        else:
            if spec.has_api_key and not self.api_keys.get(spec.name):
                raise RewardSetupError(f"reward {spec.name!r}: its endpoint asks for an API key, and none was "
                                       "fetched for it")
            endpoint = JudgeEndpoint(base_url=params.base_url, model=params.model,
                                     api_key=self.api_keys.get(spec.name) if spec.has_api_key else None)
        judge = Judge(spec.name, params, endpoint, on_warning=self.on_warning,
                      transport=_endpoint_transport(spec, params.base_url) if params.endpoint == "url" else None)
        if params.endpoint == "url":
            self._endpoint_judges.append(judge)
        return judge

    def _reward_model(self, spec: RewardSpec) -> "RewardModel":
        # Imported here: transformers' model classes load only for a run that has a reward model.
        from worker.trainer.rewards.judges.reward_model import RewardModel

        return RewardModel(spec.name, reward_model_params(spec), device=self.device)


def _endpoint_transport(spec: RewardSpec, base_url: str):
    """An endpoint judge's transport: public addresses only, checked at each connection, unless the
    operator listed its host (the served judge is the worker's own server, never guarded)."""
    from worker.trainer.rewards.judges.public_hosts import endpoint_transport

    return endpoint_transport(base_url, spec.internal_host_allowed)


def _builtin(spec: RewardSpec):
    if spec.builtin is None:
        raise RewardSetupError(f"reward {spec.name!r} is a built-in and names none (its `builtin` is empty)")
    try:
        return build_builtin(spec.builtin, spec.params)
    except (KeyError, ValueError) as exc:
        raise RewardSetupError(f"reward {spec.name!r}: {exc}") from exc


def _checked_source(spec: RewardSpec) -> None:
    problems = source_problems(spec.source or "")
    if problems:  # checked when saved too; a spec written by hand may still be wrong
        raise RewardSetupError(f"reward {spec.name!r}: {'; '.join(problems)}")


def _validated(spec: RewardSpec, model):
    """The parameters, checked again here: a spec written by hand (or by an older control plane)
    may hold what the control plane's check would refuse."""
    try:
        return model.model_validate(spec.params)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, error['loc'])) or 'params'}: {error['msg']}"
                             for error in exc.errors())
        raise RewardSetupError(f"reward {spec.name!r}: {problems}") from None
