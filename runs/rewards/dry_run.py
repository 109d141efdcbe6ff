"""Runs a reward function on a few rows and reports per row: scores, time per call, errors.

Built-ins run in this process (they are our code); Python code only through the sandbox.
"""
import time
import traceback

from runs.models import RewardFunction
from runs.rewards.rows import DryRunRow, json_safe
from runs.rewards.sandbox_pool import shared_pool
from worker.trainer.rewards.builtins import build_builtin
from worker.trainer.rewards.sandbox import SandboxError
from worker.trainer.rewards.sandbox.results import ResultError, check_values


def score_rows(reward: RewardFunction, rows: list[DryRunRow]) -> dict:
    call = _code_caller(reward) if reward.kind == RewardFunction.Kind.CODE else _builtin_caller(reward)
    results = [_score_row(call, row) for row in rows]
    timed = [r["seconds"] for r in results]
    return {
        "reward": reward.pk, "kind": reward.kind, "rows": results,
        "summary": {"calls": len(results), "errors": sum(1 for r in results if r["error"]),
                    "mean_seconds": sum(timed) / len(timed) if timed else 0.0,
                    "max_seconds": max(timed, default=0.0)},
    }


def _score_row(call, row: DryRunRow) -> dict:
    count = len(row.completions)
    prompts = [row.prompt] * count
    columns = {name: [value] * count for name, value in row.columns.items()}
    started = time.perf_counter()
    scores, output, error = None, "", None
    try:
        scores, output = call(prompts, row.completions, columns)
    except SandboxError as exc:
        error, output = exc.as_dict(), exc.output
    seconds = time.perf_counter() - started
    return {"index": row.index, "prompt": row.prompt, "columns": json_safe(row.columns), "completions": row.completions,
            "scores": scores, "seconds": seconds, "output": output, "error": error, "note": row.note}


def _code_caller(reward: RewardFunction):
    pool = shared_pool()

    def call(prompts, completions, columns):
        result = pool.call(reward.source, prompts, completions, columns)
        return result.values, result.output
    return call


def _builtin_caller(reward: RewardFunction):
    function = build_builtin(reward.builtin, reward.params)

    def call(prompts, completions, columns):
        try:
            return check_values(function(prompts, completions, **columns), len(completions)), ""
        except ResultError as exc:
            raise SandboxError(exc.kind, str(exc)) from None
        except Exception as exc:  # a built-in given the wrong columns, say: shown like user code's errors
            summary = traceback.format_exception_only(type(exc), exc)[-1].strip()
            raise SandboxError("exception", summary) from None
    return call
