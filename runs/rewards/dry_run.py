"""Runs a reward function on a few rows and reports per row: scores, time per call, errors.

Python code runs only through the sandbox. Built-ins are our code, but what they compute from
is not (a format regex, typed completions): they run in a process killed past DRY_RUN_TIMEOUT_S
(runs/dry_runs/builtin_process.py), never in a thread of the web server.
"""
import time
from contextlib import contextmanager

from runs.dry_runs.builtin_process import shared_builtins
from runs.rewards.models.function import RewardFunction
from runs.rewards.rows import DryRunRow, json_safe
from runs.rewards.sandbox_pool import SandboxKey, lease
from worker.trainer.for_control_plane.sandbox import SandboxError


def score_rows(reward: RewardFunction, rows: list[DryRunRow], requested_by: int) -> dict:
    """`requested_by`: the id of the account asking; code runs only in processes of that account
    and the reward's owner (sandbox_pool.py)."""
    with _caller(reward, requested_by) as call:
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


@contextmanager
def _caller(reward: RewardFunction, requested_by: int):
    if reward.kind != RewardFunction.Kind.CODE:
        yield _builtin_caller(reward)
        return
    with lease(SandboxKey(requested_by=requested_by, code_owner=reward.owner_id)) as pool:
        def call(prompts, completions, columns):
            result = pool.call(reward.source, prompts, completions, columns)
            return result.values, result.output
        yield call


def _builtin_caller(reward: RewardFunction):
    pool = shared_builtins()

    def call(prompts, completions, columns):
        # A built-in given the wrong columns, say, fails as SandboxError: shown like user code's errors.
        return pool.reward(reward.builtin, reward.params, prompts, completions, columns), ""
    return call
