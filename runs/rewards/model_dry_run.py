"""A dry run of a judge or a reward model, asked in a request and scored by the control plane's consumer.

These rewards are models: a served judge needs a vLLM server started (minutes on a CPU), an
endpoint judge a network call per completion, a reward model its weights loaded. None of that
happens inside a request: the request validates and reads the rows, stores a RewardDryRun and
answers 202 (runs/rewards/views.py); `score` runs in a process of the consumer
(runs/dry_runs/jobs.py, as an environment's dry run played by the model) and marks each
row: queued → loading → scoring row k of n → done, with the report a built-in's dry run answers
plus each judge's raw answer, or failed with why. The web process imports neither torch nor vLLM.

Models come from this machine's MODELS_DIR only (as a model-played environment dry run): a dry
run neither downloads a model nor loads one from an arbitrary path.
"""
import importlib.util
import json
import time
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

from django.conf import settings

from runs.background.limits import REWARD_DRY_RUNS
from runs.dry_runs import jobs as dry_run_jobs
from runs.dry_runs.jobs import DryRunJob, stopped
from runs.dry_runs.model_play import local_model_path
from runs.rewards.models.dry_run import RewardDryRun
from runs.rewards.models.endpoint_hosts import endpoint_problem, host_listed
from runs.rewards.models.function import RewardFunction
from runs.rewards.rows import DryRunRow, json_safe
from worker.trainer.for_control_plane.judges import JudgeParams, RewardModelParams

if TYPE_CHECKING:  # named only: the consumer imports them inside its functions (served_models' docstring)
    from worker.trainer.for_control_plane.served_models import Judge, RewardModel, VLLMServer

TASK = "score_reward_dry_run"
QUEUED_KINDS = (RewardFunction.Kind.JUDGE, RewardFunction.Kind.REWARD_MODEL)
SERVER_STARTUP_TIMEOUT_S = 600.0
JUDGE_CONTEXT_TOKENS = 4096


def is_queued(reward: RewardFunction) -> bool:
    """Whether this reward's dry run is the consumer's work (202) rather than the request's (200)."""
    return reward.kind in QUEUED_KINDS


def installed(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def _served(reward: RewardFunction) -> bool:
    return reward.kind == RewardFunction.Kind.JUDGE and reward.params.get("endpoint", "served") == "served"


def problem(reward: RewardFunction) -> str | None:
    """Why this machine cannot dry-run the reward, or None: asked in the request and again by the
    consumer (whose machine may differ)."""
    if reward.kind == RewardFunction.Kind.JUDGE and not _served(reward):
        # An endpoint judge needs only the network, to a host judges may call (asked again by the consumer).
        return endpoint_problem(reward.params.get("base_url", ""), must_resolve=True)
    model = reward.params.get("model", "")
    if _served(reward) and not installed("vllm"):
        return ("a served judge's dry run starts its model in vLLM on the control plane's machine, and vLLM is not "
                "installed here; dry-run it as an endpoint judge on a server you start, or try it in a run")
    if missing := [name for name in ("torch", "transformers") if not installed(name)]:
        return (f"a dry run of this reward loads its model on the control plane's machine, which lacks the "
                f"trainer stack (no {', '.join(missing)})")
    if local_model_path(model) is None:
        return (f"model {model!r} is not prepared on this machine (under {settings.MODELS_DIR}); a dry run loads "
                "only prepared models (`make trainer-stack` prepares the default one), never downloads one")
    return None


def ask(reward: RewardFunction, user, dataset_id: int, rows: list[DryRunRow]) -> RewardDryRun:
    """Stores the dry run with its rows (as JSON), in a place of the user's, and has it scored once
    the request's transaction commits."""
    stored = [{**asdict(row), "columns": json_safe(row.columns)} for row in rows]
    return dry_run_jobs.ask(JOB, reward, user, {"dataset": dataset_id, "rows": stored}, rows_total=len(rows))


def score(dry_run: RewardDryRun) -> dict:
    """The rows scored by the reward's model, served or loaded here and stopped after, each marked done."""
    reward = dry_run.reward
    rows = [DryRunRow(**row) for row in dry_run.asked["rows"]]
    with _scorer(reward) as scorer:
        results = []
        for done, row in enumerate(rows, start=1):
            results.append(scorer(row))
            dry_run.mark_progress(done)
    return report(reward, dry_run.asked["dataset"], results)


def _failure(exc: Exception) -> str:
    name = type(exc).__name__
    if name == "JudgeEndpointError":
        return f"the judge's endpoint refused: {exc}"
    if name == "ServerStartError":
        return f"the judge's vLLM server did not start: {exc}"
    if name == "RewardModelRefused":
        return f"the reward model is refused: {exc}"
    return stopped(exc)


def report(reward: RewardFunction, dataset_id: int, rows: list[dict]) -> dict:
    """What a built-in's dry run answers (runs/rewards/dry_run.py), with `answers` per row for a judge."""
    timed = [row["seconds"] for row in rows]
    errors = sum(1 for row in rows if row["error"] or any(a["error"] for a in row.get("answers") or []))
    return {"reward": reward.pk, "kind": reward.kind, "dataset": dataset_id, "rows": rows,
            "summary": {"calls": len(rows), "errors": errors,
                        "mean_seconds": sum(timed) / len(timed) if timed else 0.0,
                        "max_seconds": max(timed, default=0.0)}}


def _row_result(row: DryRunRow, scores, seconds: float, answers=None, error=None) -> dict:
    result = {"index": row.index, "prompt": row.prompt, "columns": row.columns, "completions": row.completions,
              "scores": scores, "seconds": seconds, "output": "", "error": error, "note": row.note}
    if answers is not None:
        result["answers"] = answers
    return result


def _row_inputs(row: DryRunRow) -> tuple[list[str], list[str], dict[str, list]]:
    count = len(row.completions)
    return [row.prompt] * count, row.completions, {name: [value] * count for name, value in row.columns.items()}


def _scorer(reward: RewardFunction):
    if reward.kind == RewardFunction.Kind.REWARD_MODEL:
        return _RewardModelScorer(reward)
    return _JudgeScorer(reward)


class _JudgeScorer:
    """Each row's completions through Judge.judge_rows: the raw answer and the number parsed from it.
    A served judge gets a vLLM server of its own for the dry run, stopped after."""

    def __init__(self, reward: RewardFunction):
        self.reward, self.params = reward, JudgeParams.model_validate(reward.params)
        self.server: VLLMServer | None = None
        self.judge: Judge | None = None

    def __enter__(self):
        from worker.trainer.for_control_plane.served_models import Judge, endpoint_transport

        try:
            endpoint = self._served_endpoint() if self.params.endpoint == "served" else self._url_endpoint()
            # Each connection's address checked too: the name may resolve elsewhere since the check above.
            transport = (endpoint_transport(self.params.base_url, host_listed(self.params.base_url))
                         if self.params.endpoint == "url" else None)
            self.judge = Judge(self.reward.name, self.params, endpoint, transport=transport)
            if self.params.endpoint == "url":
                self.judge.check()  # a refused key or an unknown model fails the dry run with the endpoint's answer
        except BaseException:
            self.__exit__()  # a server started before the failure is stopped
            raise
        return self

    def _url_endpoint(self):
        from runs.rewards.secrets import unseal_api_key
        from worker.trainer.for_control_plane.served_models import JudgeEndpoint

        key = unseal_api_key(self.reward.api_key_sealed) if self.reward.api_key_sealed else None
        return JudgeEndpoint(base_url=self.params.base_url, model=self.params.model, api_key=key)

    def _served_endpoint(self):
        from worker.trainer.config import TrainingConfig
        from worker.trainer.for_control_plane.served_models import JudgeEndpoint, VLLMServer, new_api_key

        path = str(local_model_path(self.params.model))
        config = TrainingConfig(model=path, vllm_startup_timeout_s=SERVER_STARTUP_TIMEOUT_S,
                                vllm_max_model_len=_context_length(path))
        self.server = VLLMServer.for_config(path, config, api_key=new_api_key()).start()
        self.server.wait_until_healthy()
        return JudgeEndpoint(base_url=self.server.url + "/v1", model=self.server.served_model_name,
                             api_key=self.server.api_key, vllm=True)

    def __call__(self, row: DryRunRow) -> dict:
        assert self.judge is not None  # called within `with`, after __enter__
        prompts, completions, columns = _row_inputs(row)
        started = time.perf_counter()
        try:
            answers = self.judge.judge_rows(prompts, completions, columns)
        except Exception as exc:
            if type(exc).__name__ == "JudgeEndpointError":
                raise
            return _row_result(row, None, time.perf_counter() - started,
                               error={"kind": "exception", "message": f"{type(exc).__name__}: {exc}"})
        shown = [{"raw": a.raw, "value": a.value, "error": a.error, "cached": a.cached, "seconds": a.seconds}
                 for a in answers]
        return _row_result(row, [a.value for a in answers], time.perf_counter() - started, answers=shown)

    def __exit__(self, *exc):
        if self.judge is not None:
            self.judge.close()
        if self.server is not None:
            self.server.stop()


def _context_length(path: str) -> int:
    """What the judge's server reserves: room for a template with a long completion, within the model's limit."""
    try:
        limit = json.loads((Path(path) / "config.json").read_text()).get("max_position_embeddings")
    except (OSError, ValueError):
        limit = None
    return min(JUDGE_CONTEXT_TOKENS, limit) if isinstance(limit, int) and limit >= 16 else JUDGE_CONTEXT_TOKENS


class _RewardModelScorer:
    """Each row's completions scored by the reward model, loaded on this machine's CPU."""

    def __init__(self, reward: RewardFunction):
        self.reward = reward
        self.model: RewardModel | None = None

    def __enter__(self):
        from worker.trainer.for_control_plane.served_models import RewardModel

        params = RewardModelParams.model_validate(self.reward.params)
        local = params.model_copy(update={"model": str(local_model_path(params.model))})
        self.model = RewardModel(self.reward.name, local, device="cpu")
        return self

    def __call__(self, row: DryRunRow) -> dict:
        assert self.model is not None  # called within `with`, after __enter__
        prompts, completions, columns = _row_inputs(row)
        started = time.perf_counter()
        try:
            scores = self.model(prompts, completions, **columns)
        except Exception as exc:  # noqa: BLE001 (one row's failure is shown on that row)
            return _row_result(row, None, time.perf_counter() - started,
                               error={"kind": "exception", "message": f"{type(exc).__name__}: {exc}"})
        return _row_result(row, [None if s is None else float(s) for s in scores], time.perf_counter() - started)

    def __exit__(self, *exc):
        if self.model is not None:
            self.model.close()


JOB = DryRunJob(task=TASK, table=RewardDryRun, places=REWARD_DRY_RUNS,
                problem=lambda dry_run: problem(dry_run.reward), work=score, failure=_failure)
