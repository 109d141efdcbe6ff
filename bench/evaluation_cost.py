"""What evaluating during training costs: the cpu-demo run with its evaluation against the same
run without (eval_steps=0), one after the other on the same vLLM server, the latter the peer.

    .venv/bin/python -m bench.evaluation_cost                # 30 steps each, eval_steps=10
    .venv/bin/python -m bench.evaluation_cost --steps 60     # the demo's whole length
    .venv/bin/python -m bench.evaluation_cost --smoke        # a tiny model, 2 steps, eval_steps=2 (bench/smoke.py)

Prints the wall time of each run (the trainer's set-up included, the server's start not), the
training loop's waits for an evaluation to end before a weight sync, and the ratio (target:
≤ 1.10, ten percent longer at most).
"""
import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from bench.learning import demo_spec, evaluations, step_metrics
from bench.report import markdown_table
from bench.smoke import add_smoke_options, refuse_server_url_without_smoke, smoke_settings, vllm_server
from runs.demos.definitions import DEMOS
from worker.trainer.config import PRESETS, TrainingConfig
from worker.trainer.metric_names import EVAL_SECONDS, SYSTEM_STEP_TIME_S, SYSTEM_WAIT_FOR_EVALUATION_S

TARGET = 1.10


def one_run(server_url: str, config: TrainingConfig, output: Path) -> dict:
    from worker.trainer.app import Trainer
    from worker.trainer.spec import LaunchSpec

    trainer = Trainer(LaunchSpec.model_validate(demo_spec(DEMOS["arithmetic"], output, server_url, config)))
    started = time.monotonic()
    outcome = trainer.run()
    wall_s = time.monotonic() - started
    events_file = output / "events" / "events-trainer-1.jsonl"
    steps = step_metrics(events_file)
    evals = evaluations(events_file)
    return {"outcome": outcome, "wall_s": wall_s, "steps": len(steps),
            "step_s": statistics.fmean(v[SYSTEM_STEP_TIME_S] for v in steps[5:] or steps),
            "waited_s": sum(v.get(SYSTEM_WAIT_FOR_EVALUATION_S, 0.0) for v in steps),
            "evaluations": len(evals), "eval_s": sum(e[EVAL_SECONDS] for e in evals.values())}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=None, help="default 30, smoke 2")
    parser.add_argument("--eval-steps", type=int, default=None,
                        help=f"default the preset's ({PRESETS['cpu-demo']['eval_steps']}), smoke 2")
    add_smoke_options(parser, serves=True)
    args = parser.parse_args(argv)
    refuse_server_url_without_smoke(parser, args)
    args.steps = args.steps or (2 if args.smoke else 30)
    args.eval_steps = args.eval_steps or (2 if args.smoke else PRESETS["cpu-demo"]["eval_steps"])

    from worker.trainer.models.paths import resolve_model_path
    from worker.trainer.models.prepare import prepare_default_model

    preset = smoke_settings(PRESETS["cpu-demo"]) if args.smoke else PRESETS["cpu-demo"]
    if not args.smoke:
        prepare_default_model()
    evaluated = TrainingConfig(**{**preset, "max_steps": args.steps, "eval_steps": args.eval_steps})
    plain = evaluated.model_copy(update={"eval_steps": 0})
    work = Path(tempfile.mkdtemp(prefix="bench-evaluation-cost-"))
    with vllm_server(resolve_model_path(evaluated.model), evaluated, work / "vllm.log", args.server_url) as server:
        # The peer first: the server's caches warm up on it, which favours the evaluated run if anything.
        peer = one_run(server.url, plain, work / "plain")
        ours = one_run(server.url, evaluated, work / "evaluated")
    ratio = ours["wall_s"] / peer["wall_s"]
    rows = [
        ("outcome", ours["outcome"], peer["outcome"], ""),
        ("steps", ours["steps"], peer["steps"], ""),
        ("evaluations (examples each)", f"{ours['evaluations']} ({evaluated.eval_examples})", "0", ""),
        ("wall time s", f"{ours['wall_s']:.0f}", f"{peer['wall_s']:.0f}",
         f"{ratio:.2f}x (target ≤ {TARGET:.2f}x: {'met' if ratio <= TARGET else 'MISSED'})"),
        ("s per step after the first 5", f"{ours['step_s']:.1f}", f"{peer['step_s']:.1f}",
         f"{ours['step_s'] / peer['step_s']:.2f}x"),
        ("evaluation seconds, all", f"{ours['eval_s']:.0f}", "—", "beside training"),
        ("training loop waited for an evaluation, s", f"{ours['waited_s']:.1f}", "—",
         f"{ours['waited_s'] / ours['wall_s']:.1%} of the wall time"),
    ]
    print(f"\nbench.evaluation_cost — cpu-demo, {args.steps} steps, eval_steps={args.eval_steps}, output in {work}")
    print(markdown_table(("measure", "with evaluation", "without (peer)", "ratio"), rows))
    (work / "result.json").write_text(json.dumps({"ours": ours, "peer": peer}))


if __name__ == "__main__":
    main()
