"""Runs a reward function on a few rows and reports per row: scores, time per call, errors.

Python code runs only through the sandbox. Built-ins are our code, but what they compute from
is not (a format regex, typed completions): they run in a process killed past DRY_RUN_TIMEOUT_S
(runs/builtin_process.py), never in a thread of the web server.
"""
import time

from runs.builtin_process import shared_builtins
from runs.models import RewardFunction
from runs.rewards.rows import DryRunRow, json_safe
from runs.rewards.sandbox_pool import shared_pool
from worker.trainer.for_control_plane.sandbox import SandboxError


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
    pool = shared_builtins()

    def call(prompts, completions, columns):
        # A built-in given the wrong columns, say, fails as SandboxError: shown like user code's errors.
        return pool.reward(reward.builtin, reward.params, prompts, completions, columns), ""
    return call
