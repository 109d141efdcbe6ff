"""The spec's reward list to callables the scorer runs.

Built-ins run in the trainer's process. Python code never does: it is called through a
SandboxPool (see rewards/sandbox/), which the trainer owns and closes when it stops.
"""
from worker.trainer.rewards.builtins import build_builtin
from worker.trainer.rewards.sandbox import SandboxPool
from worker.trainer.rewards.source_check import source_problems
from worker.trainer.rollout.scoring import RewardFunction
from worker.trainer.spec import RewardSpec


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


def load_rewards(specs: list[RewardSpec], sandbox: SandboxPool | None = None) -> list[RewardFunction]:
    return [RewardFunction(name=spec.name, weight=spec.weight, fn=_build(spec, sandbox)) for spec in specs]


def _build(spec: RewardSpec, sandbox: SandboxPool | None):
    if spec.kind == "builtin":
        try:
            return build_builtin(spec.builtin, spec.params)
        except (KeyError, ValueError) as exc:
            raise RewardSetupError(f"reward {spec.name!r}: {exc}") from exc
    problems = source_problems(spec.source or "")
    if problems:  # checked when saved too; a spec written by hand may still be wrong
        raise RewardSetupError(f"reward {spec.name!r}: {'; '.join(problems)}")
    if sandbox is None:
        raise RewardSetupError(
            f"reward {spec.name!r} is Python code, which runs only in a reward sandbox; none was given")
    return SandboxedReward(sandbox, spec.source)
