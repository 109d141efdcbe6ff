"""Per-call overhead of the reward sandbox: the same reward function called in-process and
through a warm SandboxPool, on batches of 64 completions (one GRPO group of 64, or 8 x 8).

Not a test: it prints tables and asserts nothing.

    .venv/bin/python -m bench.rewards             # about 20 s
    .venv/bin/python -m bench.rewards --calls 50  # quicker
    .venv/bin/python -m bench.rewards --smoke     # 1 call a function and side (bench/smoke.py)

What is timed, per call: building the arguments is outside both timings; the in-process call
is `fn(prompts, completions, **columns)` plus the result check the scorer does; the sandboxed
call is `pool.call(...)` (JSON encoding, two pipe transfers, the child's call and checks, the
parent's re-check). Calls alternate between the two so that machine noise hits both alike.
"""
import argparse
import os
import time

from bench.report import markdown_table, median, percentile
from bench.smoke import add_smoke_options
from worker.trainer.rewards.sandbox import SandboxPool
from worker.trainer.rewards.sandbox.results import check_values


BATCH = 64
FUNCTIONS = {
    "constant": "def reward(prompts, completions, **columns):\n    return [1.0] * len(completions)\n",
    "answer regex": '''
import re
FINAL = re.compile(r"####\\s*(-?[\\d,]+(?:\\.\\d+)?)")

def reward(prompts, completions, answer, **columns):
    scores = []
    for completion, gold in zip(completions, answer):
        found = FINAL.findall(completion)
        scores.append(1.0 if found and found[-1].replace(",", "") == gold.split("####")[-1].strip() else 0.0)
    return scores
''',
    "math-verify": '''
from math_verify import parse, verify

def reward(prompts, completions, answer, **columns):
    golds = [parse(a.split("####")[-1]) for a in answer]
    return [1.0 if verify(g, parse(c.split("####")[-1])) else 0.0 for g, c in zip(golds, completions)]
''',
}


def batch() -> tuple[list, list, dict]:
    completions = [f"Step one: {i} + {i} = {2 * i}. " * 8 + f"#### {2 * i if i % 3 else i}" for i in range(BATCH)]
    prompts = [f"What is {i} + {i}? Show your work, then give the answer after ####." for i in range(BATCH)]
    return prompts, completions, {"answer": [f"#### {2 * i}" for i in range(BATCH)]}


def in_process(source: str):
    namespace = {}
    exec(compile(source, "reward.py", "exec"), namespace)
    return namespace["reward"]


def measure(pool: SandboxPool, source: str, calls: int) -> tuple[list[float], list[float]]:
    prompts, completions, columns = batch()
    function = in_process(source)
    expected = check_values(function(prompts, completions, **columns), BATCH)
    assert pool.call(source, prompts, completions, columns).values == expected  # warm: loaded, same answers
    local, sandboxed = [], []
    for _ in range(calls):
        started = time.perf_counter()
        check_values(function(prompts, completions, **columns), BATCH)
        local.append(time.perf_counter() - started)
        started = time.perf_counter()
        pool.call(source, prompts, completions, columns)
        sandboxed.append(time.perf_counter() - started)
    return local, sandboxed


def table_row(name: str, local: list[float], sandboxed: list[float]) -> tuple:
    local_ms, sandbox_ms = median(local) * 1000, median(sandboxed) * 1000
    added_p95_ms = (percentile(sandboxed, 95) - percentile(local, 95)) * 1000
    return (name, f"{local_ms:.3f}", f"{sandbox_ms:.3f}", f"{sandbox_ms - local_ms:.3f}", f"{added_p95_ms:.3f}",
            f"{sandbox_ms / local_ms:.1f}x")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=None, help="timed calls per function and side (default 200, "
                                                                "smoke 1)")
    add_smoke_options(parser)
    args = parser.parse_args(argv)
    args.calls = args.calls or (1 if args.smoke else 200)

    started = time.perf_counter()
    pool = SandboxPool(size=1)
    pool.warm_up()
    cold_s = time.perf_counter() - started
    print(f"batch of {BATCH} completions, {args.calls} calls per side, pool of 1 warm process "
          f"(started in {cold_s * 1000:.0f} ms; confinement: {pool.confinement}); "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores\n")
    try:
        rows = [table_row(name, *measure(pool, source, args.calls)) for name, source in FUNCTIONS.items()]
    finally:
        pool.close()
    print(markdown_table(("function", "in-process ms", "sandbox ms", "added ms", "added p95 ms", "ratio"), rows))
    print(f"\nmedians per call; 'added' = sandbox - in-process (target: at most 5 ms). "
          f"Processes started: {pool.processes_started} (no start per call).")


if __name__ == "__main__":
    main()
