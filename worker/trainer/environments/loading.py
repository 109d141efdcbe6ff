"""The launch spec's environment as an Environment the episode runner plays against."""
from worker.trainer.environments.base import Environment, ExtraReward
from worker.trainer.environments.builtins import CalculatorEnvironment, FeedbackEnvironment
from worker.trainer.environments.catalog import BUILTIN_ENVIRONMENTS, CalculatorParams, FeedbackParams
from worker.trainer.environments.code import CodeEnvironment
from worker.trainer.environments.setup_error import EnvironmentSetupError
from worker.trainer.environments.verifiers_env import load_verifiers_environment
from worker.trainer.rollout.scoring import RewardFunction
from worker.trainer.spec import EnvironmentSpec


def tool_format_for(setting: str, rendering) -> str:
    """auto: hermes where the chat template takes tools, else the text format."""
    if setting != "auto":
        return setting
    return "hermes" if rendering.takes_tools else "text"


def load_environment(spec: EnvironmentSpec, tool_format: str, sandbox=None) -> Environment:
    if spec.kind == "builtin":
        return _builtin(spec, tool_format)
    if spec.kind == "code":
        if sandbox is None:
            raise EnvironmentSetupError(f"environment {spec.name!r} is Python code, which runs only in a sandbox")
        return CodeEnvironment.loaded(sandbox, spec.source or "", spec.name)
    return load_verifiers_environment(spec)


def _builtin(spec: EnvironmentSpec, tool_format: str) -> Environment:
    params_model = BUILTIN_ENVIRONMENTS.get(spec.builtin or "")
    if params_model is None:
        raise EnvironmentSetupError(f"environment {spec.name!r}: no built-in {spec.builtin!r} "
                                    f"(built-ins: {', '.join(BUILTIN_ENVIRONMENTS)})")
    try:
        params = params_model.model_validate(spec.params)
    except ValueError as exc:
        raise EnvironmentSetupError(f"environment {spec.name!r}: {exc}") from None
    if isinstance(params, CalculatorParams):
        return CalculatorEnvironment(params, tool_format)
    if isinstance(params, FeedbackParams):
        return FeedbackEnvironment(params)
    raise EnvironmentSetupError(f"environment {spec.name!r}: the built-in {spec.builtin!r} has no environment here")


def extra_reward_functions(environment: Environment) -> list[RewardFunction]:
    """The environment's own rewards as rubric functions, reading the episode columns the scorer
    passes (rollout/scoring.episode_columns), then its own rubric's (a verifiers environment's)."""
    return ([RewardFunction(extra.name, 1.0, _scored_by(extra)) for extra in environment.extra_rewards()]
            + environment.reward_functions())


def _scored_by(extra: ExtraReward):
    def reward(prompts, completions, tool_calls=None, assistant_turns=None, **columns):
        calls = tool_calls or [0] * len(completions)
        turns = assistant_turns or [1] * len(completions)
        return [extra.score(c, t) for c, t in zip(calls, turns)]
    return reward
