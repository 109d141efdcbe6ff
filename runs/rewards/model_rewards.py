"""Rewards a model gives (a judge, a reward model): their parameters as the control plane saves them.

Checked with the worker's own schemas (worker/trainer/rewards/judges/catalog.py), so what is
saved is what a worker accepts, with every default filled in. A model the worker loads itself (a
served judge's, a reward model's) must be a name, not a path: the rule a run's model follows
(worker/trainer/models/paths.py, docs/security.md). An endpoint judge's model is only a name
the endpoint knows, sent to it, never loaded here.
"""
from pydantic import BaseModel
from pydantic import ValidationError as SchemaError
from pydantic_core import ErrorDetails

from runs.rewards.models.endpoint_hosts import endpoint_problem
from worker.trainer.for_control_plane.judges import JudgeParams, RewardModelParams
from worker.trainer.models.paths import model_problem

JUDGE, REWARD_MODEL = "judge", "reward_model"
SCHEMAS: dict[str, type[BaseModel]] = {JUDGE: JudgeParams, REWARD_MODEL: RewardModelParams}


class ParamsRefused(ValueError):
    """`problems`: one line per refused field, `field: what is wrong`."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("; ".join(problems))


def checked_params(kind: str, params) -> dict:
    """`params` validated for `kind` (judge, reward_model) with its defaults filled in; ParamsRefused otherwise."""
    if not isinstance(params, dict):
        raise ParamsRefused([f"params: a {kind} takes an object of parameters, not {type(params).__name__}"])
    try:
        full = SCHEMAS[kind].model_validate(params).model_dump()
    except SchemaError as exc:
        raise ParamsRefused([schema_problem(error) for error in exc.errors()]) from None
    if loads_model_itself(kind, full) and (problem := model_problem(full["model"])):
        raise ParamsRefused([f"model: {problem}"])
    if takes_api_key(kind, full) and (problem := endpoint_problem(full["base_url"])):
        raise ParamsRefused([problem])
    return full


def schema_problem(error: ErrorDetails) -> str:
    """One pydantic error as `field: message`. A check across fields has no location: its message
    starts with the field it is about (catalog.py writes them so)."""
    message = error["msg"].removeprefix("Value error, ")
    where = ".".join(map(str, error["loc"]))
    return f"{where}: {message}" if where else message


def loads_model_itself(kind: str, params: dict) -> bool:
    """Whether the worker loads `params.model` (a served judge, a reward model) rather than naming it to an endpoint."""
    return kind == REWARD_MODEL or (kind == JUDGE and params.get("endpoint", "served") == "served")


def takes_api_key(kind: str, params: dict) -> bool:
    """Only a judge behind a URL is sent a key."""
    return kind == JUDGE and params.get("endpoint") == "url"
