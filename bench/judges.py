"""Judges on the CPU: how fast a served judge judges, and what judging costs a training run.

Not a test: it starts real vLLM servers and the real trainer, prints tables and asserts nothing.

    .venv/bin/python -m bench.judges                      # both parts, about 15 minutes
    .venv/bin/python -m bench.judges --only throughput    # judged completions per second, about 4 minutes
    .venv/bin/python -m bench.judges --only runs --steps 12
    .venv/bin/python -m bench.judges --quick              # 8 calls a level, 2 steps a run (8-12 minutes)
    .venv/bin/python -m bench.judges --smoke              # a tiny model judging, 1 call a level, 2 steps a run

`--smoke` (bench/smoke.py): bench/smoke.py's tiny Llama is the policy and the judge; with
`--server-url` the server there is both (the judge then an endpoint judge at that URL).

throughput: a score judge (worker/trainer/rewards/judges/judge.py) served by the worker's own
vLLM (judges/served.py: the default model, SmolLM2-135M-Instruct, on the CPU) judges distinct
arithmetic answers at 1, 8 and 32 concurrent calls (limits.max_concurrency), every answer a
question never asked before (no cache hit). The peer, in the same run and on the same server:
the same request bodies posted straight from an httpx client with as many in flight, without
the judge's limiter, retries, cache and parsing: what the judge's own machinery costs.

runs: the cpu-demo preset (SmolLM2 learning arithmetic, 16 completions a step, evaluation off)
trained twice for --steps steps against its own vLLM server: with its rule rewards (accuracy and
format) alone, then with a served score judge of the same model added. Per run: seconds a step
after the first two, and the loop's wait for rollouts (`async/wait_for_rollouts_s`) as a share
of it (target ≤ 5%: the judge is called beside generation, in the rollout workers' scoring, so
the loop should not wait on it). From the judged run: the judge's calls, its latency, the
cache's hit rate on the demo's completions (identical (prompt, completion) pairs of a group, or
asked again, judged once) and its disagreement with the accuracy verifier.
"""
import argparse
import asyncio
import os
import statistics
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from bench.report import fmt, markdown_table
from bench.smoke import add_smoke_options, refuse_server_url_without_smoke, smoke_settings, tiny_model, vllm_server
from worker.trainer.metric_names import (ASYNC_WAIT_FOR_ROLLOUTS_S, JUDGE_DISAGREEMENT, JUDGE_MEASURE,
                                         ROLLOUT_REWARD_FN_MEAN, ROLLOUT_REWARD_MEAN, SYSTEM_STEP_TIME_S)

CONCURRENCY = (1, 8, 32)
DEFAULT_MODEL = "HuggingFaceTB/SmolLM2-135M-Instruct"
SCORE_JUDGE = {
    "template": "Question: {prompt}\nAnswer: {completion}\n\nIs the answer correct? Rate it from 0 (wrong) to "
                "9 (correct). Reply with the number only.",
    # 0..9: one digit, so that every answer the constraint allows is on the scale.
    "mode": "score", "scale_min": 0, "scale_max": 9, "max_answer_tokens": 4, "endpoint": "served",
    "model": DEFAULT_MODEL, "pass_threshold": 0.5,
}
JUDGE_NAME = "quality"
JUDGE_WEIGHT = 0.5
WAIT_TARGET = 0.05
SKIP_STEPS = 2  # start-up steps left out of the step time


# --- throughput --------------------------------------------------------------------------------

def questions(count: int, offset: int) -> tuple[list[str], list[str]]:
    """`count` arithmetic problems and answers, a third of them wrong, none repeated across offsets."""
    from worker.trainer.data.generators import generate

    rows = generate("arithmetic", {"count": offset + count, "difficulty": 2, "seed": 7})[offset:]
    prompts, completions = [], []
    for index, row in enumerate(rows):
        value = int(row["answer"].removeprefix("#### "))
        given = value if index % 3 else value + 1 + (offset + index) % 9
        expression = row["prompt"].removeprefix("What is ").split("?")[0]
        prompts.append(row["prompt"])
        completions.append(f"{expression} = {given}, so the answer is {given}.\n#### {given} (#{offset + index})")
    return prompts, completions


def smoke_judge(server_url: str | None) -> dict:
    """The score judge on the tiny model: served by the worker, or the endpoint at `server_url`."""
    if server_url:
        return {**SCORE_JUDGE, "endpoint": "url", "base_url": server_url.rstrip("/") + "/v1", "model": "policy"}
    return {**SCORE_JUDGE, "model": tiny_model()}


def judge_throughput(endpoint, concurrency: int, count: int, offset: int, judge: dict = SCORE_JUDGE) -> dict:
    """Judged completions a second through the Judge, and how its answers went."""
    from worker.trainer.rewards.judges.catalog import JudgeParams
    from worker.trainer.rewards.judges.judge import Judge

    params = JudgeParams.model_validate({**judge, "limits": {"max_concurrency": concurrency}})
    prompts, completions = questions(count, offset)
    with Judge(JUDGE_NAME, params, endpoint, on_warning=lambda message: None) as judge:
        started = time.perf_counter()
        answers = judge.judge_rows(prompts, completions, {})
        seconds = time.perf_counter() - started
        metrics = judge.take_metrics()
        most = judge.most_in_flight
    return {"per_s": count / seconds, "latency": metrics.get("latency_s_mean"), "most_in_flight": most,
            "unanswered": sum(answer.value is None for answer in answers), "hits": metrics["cache_hits"]}


def peer_throughput(endpoint, concurrency: int, count: int, offset: int, judge: dict = SCORE_JUDGE) -> float:
    """The same requests posted straight with httpx, `concurrency` in flight: completions a second."""
    import httpx

    from worker.trainer.rewards.judges.catalog import JudgeParams
    from worker.trainer.rewards.judges.judge import Judge

    params = JudgeParams.model_validate(judge)
    prompts, completions = questions(count, offset)
    with Judge(JUDGE_NAME, params, endpoint) as judge:  # only to write the very bodies the judge sends
        bodies = [judge.request(params.template.format(prompt=p, completion=c), params.max_answer_tokens)
                  for p, c in zip(prompts, completions)]

    async def post_all() -> None:
        slots = asyncio.Semaphore(concurrency)
        headers = {"Authorization": f"Bearer {endpoint.api_key}"} if endpoint.api_key else {}
        async with httpx.AsyncClient(headers=headers, timeout=600) as client:
            async def post(body):
                async with slots:
                    response = await client.post(endpoint.base_url + "/chat/completions", json=body)
                    response.raise_for_status()
            await asyncio.gather(*(post(body) for body in bodies))

    started = time.perf_counter()
    asyncio.run(post_all())
    return count / (time.perf_counter() - started)


@contextmanager
def judge_endpoint(judge: dict, config, output: Path) -> Iterator:
    """Where `judge` is asked: its URL, or a server of its model started for it (ServedJudges)."""
    from worker.trainer.rewards.judges.judge import JudgeEndpoint
    from worker.trainer.rewards.judges.served import ServedJudges
    from worker.trainer.spec import RewardSpec

    if judge["endpoint"] == "url":  # a vLLM server: constrained as the worker's own judges are
        yield JudgeEndpoint(base_url=judge["base_url"], model=judge["model"], vllm=True)
        return
    spec = RewardSpec.model_validate({"name": JUDGE_NAME, "kind": "judge", "params": judge})
    with ServedJudges([spec], config, output) as served:
        yield served.endpoint(judge["model"])


def throughput_rows(count: int, output: Path, judge: dict = SCORE_JUDGE) -> list[tuple]:
    from worker.trainer.config import PRESETS, TrainingConfig

    config = TrainingConfig(**PRESETS["cpu-demo"])
    rows, offset = [], 0
    with judge_endpoint(judge, config, output) as endpoint:
        judge_throughput(endpoint, 4, 4, 10_000, judge)  # warm-up: the server's first requests compile
        for number, concurrency in enumerate(CONCURRENCY):
            # Ours first at one level, the peer first at the next: the machine's drift weighs on both.
            order = ("ours", "peer") if number % 2 == 0 else ("peer", "ours")
            measured = {}
            calls = max(count, concurrency)  # enough to fill the level
            for side in order:
                run = judge_throughput if side == "ours" else peer_throughput
                measured[side] = run(endpoint, concurrency, calls, offset, judge)
                offset += calls
            ours, peer = measured["ours"], measured["peer"]
            rows.append((concurrency, f"{ours['per_s']:.2f}", f"{peer:.2f}", f"{ours['per_s'] / peer:.2f}",
                         fmt(ours["latency"]), ours["most_in_flight"], f"{ours['unanswered']}/{calls}",
                         f"{ours['hits']:.0f}"))
    return rows


# --- runs --------------------------------------------------------------------------------------

def run_spec(output: Path, server_url: str, config, judged: bool, judge: dict = SCORE_JUDGE) -> dict:
    from bench.learning import demo_spec
    from runs.demos.definitions import DEMOS

    spec = demo_spec(DEMOS["arithmetic"], output, server_url, config)
    spec["rewards"][0]["verifier"] = True  # accuracy: the judge's disagreement is measured against it
    spec["eval_rewards"] = []
    if judged:
        # An endpoint judge here is this machine's own server, as an operator would list it.
        spec["rewards"].append({"name": JUDGE_NAME, "kind": "judge", "weight": JUDGE_WEIGHT, "params": judge,
                                "internal_host_allowed": judge.get("endpoint") == "url"})
    return spec


def train(config, judged: bool, root: Path, judge: dict = SCORE_JUDGE,
          server_url: str | None = None) -> tuple[str, list[dict], float]:
    """One run: its outcome, its steps' metrics and its wall time."""
    from bench.learning import step_metrics
    from worker.trainer.app import Trainer
    from worker.trainer.models.paths import resolve_model_path
    from worker.trainer.spec import LaunchSpec

    output = root / ("judged" if judged else "rules")
    with vllm_server(str(resolve_model_path(config.model)), config, output / "vllm.log", server_url) as server:
        started = time.monotonic()
        outcome = Trainer(LaunchSpec.model_validate(run_spec(output, server.url, config, judged, judge))).run()
        seconds = time.monotonic() - started
    return outcome, step_metrics(output / "events" / "events-trainer-1.jsonl"), seconds


def steady(steps: list[dict]) -> list[dict]:
    return steps[SKIP_STEPS:] or steps


def run_row(name: str, outcome: str, steps: list[dict], seconds: float) -> tuple:
    measured = steady(steps)
    step_s = sum(v[SYSTEM_STEP_TIME_S] for v in measured)
    waited = sum(v[ASYNC_WAIT_FOR_ROLLOUTS_S] for v in measured)
    share = waited / step_s if step_s else float("nan")
    verdict = "met" if share <= WAIT_TARGET else "**missed**"
    return (name, outcome, len(steps), f"{step_s / len(measured):.1f}", f"{share:.1%} ({verdict})",
            f"{statistics.fmean(v[ROLLOUT_REWARD_MEAN] for v in steps):.3f}", f"{seconds / 60:.1f}")


def judge_rows(steps: list[dict]) -> list[tuple]:
    """What the judge measured of itself over the judged run (judge/<name>/... metrics)."""
    def total(key: str) -> float:
        return sum(v.get(JUDGE_MEASURE.name(judge=JUDGE_NAME, measure=key), 0.0) for v in steps)

    def series(name: str) -> list[float]:
        return [v[name] for v in steps if name in v]

    calls, hits = total("calls"), total("cache_hits")
    latencies = series(JUDGE_MEASURE.name(judge=JUDGE_NAME, measure="latency_s_mean"))
    disagreement = series(JUDGE_DISAGREEMENT.name(judge=JUDGE_NAME))
    rewards = series(ROLLOUT_REWARD_FN_MEAN.name(reward=JUDGE_NAME))
    return [
        ("judge calls / cache hits", f"{calls:.0f} / {hits:.0f}", "every completion asked once; hits answered "
                                                                  "from the cache or a call in flight"),
        ("cache hit rate on the demo", f"{hits / (calls + hits):.1%}" if calls + hits else "—",
         "identical (prompt, completion) pairs judged once"),
        ("judge latency s, mean of the steps' means", fmt(statistics.fmean(latencies)) if latencies else "—", ""),
        ("judge failures / timeouts / unreadable", f"{total('failures'):.0f} / {total('timeouts'):.0f} / "
                                                   f"{total('unreadable'):.0f}", ""),
        ("judge reward mean", fmt(statistics.fmean(rewards), 3) if rewards else "—", "0..1"),
        ("disagreement with accuracy, mean", fmt(statistics.fmean(disagreement), 3) if disagreement else "—",
         f"pass threshold {SCORE_JUDGE['pass_threshold']}"),
    ]


def runs_tables(steps_count: int, root: Path, judge: dict = SCORE_JUDGE, smoke: bool = False,
                server_url: str | None = None) -> tuple[list[tuple], list[tuple]]:
    from worker.trainer.config import PRESETS, TrainingConfig

    preset = smoke_settings(PRESETS["cpu-demo"]) if smoke else PRESETS["cpu-demo"]
    config = TrainingConfig(**{**preset, "max_steps": steps_count, "eval_steps": 0, "save_steps": 1000, "seed": 0})
    rows, judged_steps = [], []
    for judged in (False, True):
        outcome, steps, seconds = train(config, judged, root, judge, server_url)
        rows.append(run_row("rules + judge" if judged else "rules only (peer)", outcome, steps, seconds))
        judged_steps = steps if judged else judged_steps
    return rows, judge_rows(judged_steps)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", choices=("throughput", "runs"))
    parser.add_argument("--calls", type=int, default=64, help="completions judged per concurrency and side")
    parser.add_argument("--steps", type=int, default=10, help="steps of each training run")
    parser.add_argument("--quick", action="store_true", help="8 calls a level and 2 steps a run (minutes)")
    add_smoke_options(parser, serves=True)
    args = parser.parse_args(argv)
    refuse_server_url_without_smoke(parser, args)
    calls, steps = (1, 2) if args.smoke else (8, 2) if args.quick else (args.calls, args.steps)
    judge = smoke_judge(args.server_url) if args.smoke else SCORE_JUDGE

    if not args.smoke:
        from worker.trainer.models.prepare import prepare_default_model

        prepare_default_model()
    root = Path(tempfile.mkdtemp(prefix="bench-judges-"))
    print(f"bench.judges: output in {root}; {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
    if args.only in (None, "throughput"):
        rows = throughput_rows(calls, root / "throughput", judge)
        print(f"\nJudged completions per second: a score judge served by vLLM on the CPU ({judge['model']}), "
              f"{calls} distinct completions per level and side (at least as many as the level's calls); peer: the "
              "same requests straight from httpx\n")
        print(markdown_table(("concurrent calls", "judge /s", "peer /s", "judge/peer", "latency s mean",
                              "most in flight", "no value", "cache hits"), rows))
    if args.only in (None, "runs"):
        rows, judged = runs_tables(steps, root, judge, args.smoke, args.server_url)
        print(f"\nA step with a judge against rule rewards: cpu-demo preset, {steps} steps each, evaluation off, "
              f"step time over the steps after the first {SKIP_STEPS}; target: wait for rollouts ≤ "
              f"{WAIT_TARGET:.0%} of the step\n")
        print(markdown_table(("rewards", "outcome", "steps", "s / step", "wait for rollouts", "reward mean",
                              "wall min"), rows))
        print(f"\nThe judge in the judged run ({JUDGE_NAME!r}, weight {JUDGE_WEIGHT}, {judge['endpoint']}: "
              f"{judge['model']})\n")
        print(markdown_table(("measure", "value", "note"), judged))
    print(f"\nload average at the end {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
