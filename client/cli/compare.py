"""`grpo compare ...`: 2 to 8 runs side by side: their summary and config differences, their
samples at a step, and their evaluation examples."""
import argparse

from client.api import ControlPlane
from client.cli.output import Subparsers, add_json_flag, number, one_line, print_json, show_json
from client.tables import print_table


def add_parser(areas: Subparsers) -> None:
    compare = areas.add_parser("compare", help="2 to 8 runs side by side: summary and config diff, samples, "
                                               "evaluation examples")
    verbs = compare.add_subparsers(required=True, metavar="{runs,samples,eval-examples,eval-example}")
    runs = verbs.add_parser("runs", help="each run's summary and the config fields that differ (--json: the "
                                         "aligned metric series too)")
    add_run_ids(runs)
    runs.add_argument("--metric", action="append", default=[], help="a metric to align (repeat; default: the "
                                                                    "usual GRPO ones)")
    runs.add_argument("--x", choices=("step", "time", "samples"), default="step", help="the series' x axis")
    runs.add_argument("--points", type=int, help="at most this many points per run and metric")
    runs.set_defaults(command=compare_runs)
    samples = verbs.add_parser("samples", help="completions of the prompts the runs share, side by side")
    add_run_ids(samples)
    samples.add_argument("--step", type=int, help="training step (default: the last all runs logged samples for)")
    samples.set_defaults(command=compare_samples)
    examples = verbs.add_parser("eval-examples", help="per run, examples learned, forgotten...; the shared ones")
    add_run_ids(examples)
    examples.set_defaults(command=compare_eval_examples)
    example = verbs.add_parser("eval-example", help="one evaluation example followed in each run")
    add_run_ids(example)
    example.add_argument("--key", required=True, help="the example's key (16 hex digits, from eval-examples)")
    example.set_defaults(command=compare_eval_example)


def add_run_ids(command: argparse.ArgumentParser) -> None:
    command.add_argument("runs", type=int, nargs="+", metavar="RUN", help="the runs' ids (2 to 8)")
    add_json_flag(command)


def compare_runs(api: ControlPlane, args: argparse.Namespace) -> None:
    comparison = api.compare(args.runs, args.metric or None, x=args.x, points=args.points)
    if args.json:
        return print_json(comparison)
    print_table(("run", "name", "status", "steps", "final reward", "best reward"),
                [(s["run"], s["name"], s["status"], s["steps"], number(s["final_reward"]), number(s["best_reward"]))
                 for s in comparison["summary"]])
    differing = comparison["config_diff"]["differing"]
    if differing:
        print()
        print_table(("differs", *map(str, args.runs)),
                    [(d["field"], *(d["values"].get(str(run), "") for run in args.runs)) for d in differing])


def compare_samples(api: ControlPlane, args: argparse.Namespace) -> None:
    answer = api.compare_samples(args.runs, args.step)
    if args.json:
        return print_json(answer)
    print("steps shown: " + ", ".join(f"run {run} step {step}" for run, step in answer["steps"].items()))
    for shared in answer["prompts"]:
        print(f"\n{one_line(shared['prompt'], 100)}")
        for run, completions in shared["completions"].items():
            for sample in completions:
                print(f"  run {run}: {one_line(sample.get('completion', ''), 90)}")


def compare_eval_examples(api: ControlPlane, args: argparse.Namespace) -> None:
    answer = api.compare_eval_examples(args.runs)
    if args.json:
        return print_json(answer)
    classes = ("learned", "forgotten", "unstable", "always_passed", "never_passed")
    print_table(("run", "name", "evaluations", "examples", *classes),
                [(r["run"], r["name"], r["evaluations"], r["examples"], *(r["counts"][c] for c in classes))
                 for r in answer["runs"]])
    if answer["examples"]:
        print()
        print_table(("key", "shared by", *map(str, args.runs), "prompt"),
                    [(e["key"], e["shared_by"], *(place(e, run) for run in args.runs), one_line(e["prompt_preview"]))
                     for e in answer["examples"]])


def place(example: dict, run: int) -> str:
    there = example["runs"].get(str(run))
    return there["classification"] if there else ""


def compare_eval_example(api: ControlPlane, args: argparse.Namespace) -> None:
    answer = api.compare_eval_example(args.runs, args.key)
    print_json(answer) if args.json else show_json(answer)
