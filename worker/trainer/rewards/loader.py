"""The spec's reward list to callables the scorer runs."""
from worker.trainer.rewards.builtins import build_builtin
from worker.trainer.rollout.scoring import RewardFunction
from worker.trainer.spec import RewardSpec


class RewardSetupError(ValueError):
    pass


def load_rewards(specs: list[RewardSpec]) -> list[RewardFunction]:
    functions = []
    for spec in specs:
        if spec.kind == "builtin":
            try:
                fn = build_builtin(spec.builtin, spec.params)
            except (KeyError, ValueError) as exc:
                raise RewardSetupError(f"reward {spec.name!r}: {exc}") from exc
        else:
            # User code runs only inside the reward sandbox, never in the trainer's process.
            raise RewardSetupError(
                f"reward {spec.name!r} is Python code, which needs the reward sandbox; this trainer has none yet")
        functions.append(RewardFunction(name=spec.name, weight=spec.weight, fn=fn))
    return functions
